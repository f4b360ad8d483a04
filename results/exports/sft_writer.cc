#include "results/exports/sft_writer.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/file.h"
#include "common/hash.h"
#include "common/status_macros.h"
#include "results/exports/file_sink.h"
#include "results/exports/folder_writer.h"
#include "results/exports/text.h"
#include "results/exports/turn_facts.h"
#include "verdict/verdict.h"

namespace ptxbench::exports {
namespace {

namespace v1 = ::ptxbench::v1;
using Json = StrictJson;

constexpr char kRecords[] = "sft.jsonl";
constexpr char kManifest[] = "sft.manifest.json";

// The correct turns of `t` that `filter` keeps, in turn order.
std::vector<const v1::Turn*> ChosenTurns(const v1::Trajectory& t, const SftFilter& filter) {
  std::vector<const v1::Turn*> out;
  const v1::Turn* best = nullptr;
  for (const v1::Turn& turn : t.turns()) {
    if (!IsCorrect(turn)) continue;
    switch (filter.kind) {
      case SftFilter::Kind::kCorrect:
        out.push_back(&turn);
        break;
      case SftFilter::Kind::kMinSpeedup:
        if (CorrectSpeedup(turn) >= filter.min_speedup) out.push_back(&turn);
        break;
      case SftFilter::Kind::kBest:
        // Strictly faster only: the earliest of equals stays.
        if (best == nullptr || CorrectSpeedup(turn) > CorrectSpeedup(*best)) best = &turn;
        break;
    }
  }
  if (best != nullptr) out.push_back(best);
  return out;
}

class SftWriter : public FolderWriter {
 public:
  SftWriter(std::unique_ptr<OutputDir> dir, const Options& options, std::unique_ptr<FileSink> records)
      : FolderWriter(std::move(dir), "sft", /*one_experiment=*/false),
        options_(options),
        records_(std::move(records)) {}

 private:
  absl::Status OnBegin(const v1::Experiment& experiment,
                       const std::vector<v1::DefinitionDocument>&) override {
    sources_.push_back({{"experiment_id", experiment.experiment_id()},
                        {"name", experiment.name()},
                        {"spec_sha256", Sha256Hex(experiment.spec_json())},
                        {"language", experiment.language()},
                        {"context_policy", experiment.context_policy()}});
    if (!experiment.lineage_json().empty()) {
      // What made it: a pipeline stage (docs/PIPELINES.md, "Lineage").
      sources_.back()["lineage"] =
          Json::parse(experiment.lineage_json(), nullptr, /*allow_exceptions=*/false);
    }
    return absl::OkStatus();
  }

  absl::Status OnAdd(const v1::Trajectory& t) override {
    ++trajectories_;
    turns_ += t.turns_size();
    for (const v1::Turn* chosen : ChosenTurns(t, options_.sft_filter)) {
      records_->Append(Record(t, *chosen).dump(-1, ' ', false, Json::error_handler_t::replace));
      records_->Append("\n");
      ++records_written_;
    }
    return records_->status();
  }

  absl::Status OnFinish() override {
    PTXB_RETURN_IF_ERROR(records_->Close());
    Json manifest = {
        {"format", "ptxbench.sft.v1"},
        {"ptxbench_version", options_.ptxbench_version},
        {"created", Rfc3339(options_.now)},
        {"filter", SftFilterName(options_.sft_filter)},
        {"sources", sources_},
        {"counts",
         {{"experiments", sources_.size()},
          {"trajectories", trajectories_},
          {"turns", turns_},
          {"records", records_written_}}},
        {"simulated", simulated_},
        {"files",
         Json::array({{{"path", kRecords},
                       {"bytes", records_->size()},
                       {"sha256", records_->sha256()}}})}};
    return WriteFile(dir().File(kManifest),
                     manifest.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
  }

  // The conversation up to and including `chosen`'s answer.
  Json Record(const v1::Trajectory& t, const v1::Turn& chosen) {
    const v1::TrajectorySummary& s = t.summary();
    Json messages = Json::array();
    messages.push_back(SftMessage("system", t.system_prompt(), 0));
    messages.push_back(SftMessage("user", t.task_prompt(), 0));
    bool simulated = false;
    for (const v1::Turn& turn : t.turns()) {
      simulated |= IsSimulated(turn);
      if (turn.index() == chosen.index()) break;
      messages.push_back(SftMessage("assistant", turn.response().text(), 0));
      messages.push_back(SftMessage("user", turn.feedback(), 0));
    }
    messages.push_back(SftMessage("assistant", chosen.response().text(), 1));
    simulated_ |= simulated;
    Json metadata = {
        {"experiment", experiment().name()},
        {"experiment_id", experiment().experiment_id()},
        {"trajectory_id", s.trajectory_id()},
        {"model", s.model()},
        {"definition", s.definition()},
        {"tag", s.prompt_tag()},
        {"sample", s.sample_index()},
        {"turn", chosen.index()},
        {"trajectory_assistant_index", 2 + 2 * chosen.index()},
        {"speedup", CorrectSpeedup(chosen)},
        {"min_speedup", verdict::MinSpeedup(chosen.eval())},
        {"target_speedup", s.target_speedup()},
        {"language", experiment().language()},
        {"simulated", simulated},
        {"kernel_sha256", chosen.kernel_sha256()},
        {"system_prompt_sha256", Sha256Hex(t.system_prompt())},
        {"task_prompt_sha256", Sha256Hex(t.task_prompt())},
        {"assistant_sha256", Sha256Hex(chosen.response().text())}};
    return {{"id", absl::StrCat(s.trajectory_id(), "_t", chosen.index())},
            {"messages", std::move(messages)},
            {"metadata", std::move(metadata)}};
  }

  const Options options_;
  std::unique_ptr<FileSink> records_;
  Json sources_ = Json::array();
  int64_t trajectories_ = 0, turns_ = 0, records_written_ = 0;
  bool simulated_ = false;
};

}  // namespace

StrictJson SftMessage(const char* role, const std::string& content, int loss) {
  return {{"role", role}, {"content", content}, {"step_loss_mask", loss}};
}

absl::StatusOr<std::unique_ptr<Writer>> MakeSftWriter(std::unique_ptr<OutputDir> dir,
                                                      const Options& options) {
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<FileSink> records,
                        FileSink::Create(dir->File(kRecords), /*hash=*/true));
  return std::unique_ptr<Writer>(new SftWriter(std::move(dir), options, std::move(records)));
}

}  // namespace ptxbench::exports
