// The synthesize stage (synthesize.h).

#include "pipelines/synthesize.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/hash.h"
#include "pipelines/jsonl.h"

namespace ptxbench::pipelines {
namespace {

using Json = nlohmann::json;

SynthesisTemplate MakeTemplate(std::string system, std::string user) {
  SynthesisTemplate t{std::move(system), std::move(user), ""};
  t.sha256 = Sha256Hex(absl::StrCat(t.system, std::string(1, '\0'), t.user));
  return t;
}

// Fixit: the reasoning from a wrong kernel and its error to the fix, written
// as the model's own thinking before it writes the fix.
const SynthesisTemplate& FixitTemplate() {
  static const SynthesisTemplate t = MakeTemplate(
      "You are an expert GPU kernel engineer. You write the reasoning an engineer goes "
      "through while debugging a CUDA kernel: reading the error, finding its cause in the "
      "code and deciding the fix.",
      "A model was given this task:\n\n<task>\n{task}\n</task>\n\nIt wrote this kernel:\n\n"
      "<wrong_kernel>\n{wrong_kernel}\n</wrong_kernel>\n\nwhich failed with:\n\n<feedback>\n"
      "{feedback}\n</feedback>\n\nThis kernel fixes it:\n\n<fixed_kernel>\n{kernel}\n"
      "</fixed_kernel>\n\nWrite, in the first person and as thinking before the fix is "
      "written, the reasoning that leads from the failure to the fixed kernel: what the "
      "feedback says, which lines cause it and why, and what to change. Do not copy the "
      "code, and do not mention that you were shown the fix.");
  return t;
}

// KernelGen: the reasoning that leads from a task to a correct kernel.
const SynthesisTemplate& KernelgenTemplate() {
  static const SynthesisTemplate t = MakeTemplate(
      "You are an expert GPU kernel engineer. You write the reasoning an engineer goes "
      "through while designing a fast, correct CUDA kernel for a task.",
      "The task:\n\n<task>\n{task}\n</task>\n\nA correct kernel for it:\n\n<kernel>\n{kernel}\n"
      "</kernel>\n\nWrite, in the first person and as thinking before the kernel is "
      "written, the reasoning that leads to this kernel: the shapes and data types, the "
      "decomposition across blocks and threads, the memory movement and the instructions "
      "chosen, and how correctness is kept. Do not copy the code, and do not mention that "
      "you were shown the kernel.");
  return t;
}

Json TurnJson(const TurnRef& t) { return {{"trajectory_id", t.trajectory_id}, {"turn", t.turn}}; }

TurnRef TurnOf(const Json& j) {
  return {j.at("trajectory_id").get<std::string>(), j.at("turn").get<int>()};
}

}  // namespace

const SynthesisTemplate& FindTemplate(absl::string_view name) {
  return name == "fixit" ? FixitTemplate() : KernelgenTemplate();
}

absl::StatusOr<std::vector<SynthesisRow>> ReadPairsForSynthesis(absl::string_view text) {
  return internal::ReadJsonl<SynthesisRow>(text, "pairs.jsonl", "a pair", [](const Json& j) {
    SynthesisRow r;
    r.definition = j.at("definition").get<std::string>();
    r.kernel = TurnOf(j.at("fixed"));
    r.wrong = TurnOf(j.at("wrong"));
    r.source = j;
    return r;
  });
}

absl::StatusOr<std::vector<SynthesisRow>> ReadSelectionForSynthesis(absl::string_view text) {
  return internal::ReadJsonl<SynthesisRow>(
      text, "selection.jsonl", "a selected row", [](const Json& j) {
        SynthesisRow r;
        r.definition = j.at("definition").get<std::string>();
        r.kernel = TurnOf(j);
        r.source = j;
        return r;
      });
}

SynthesisExperiment BuildSynthesisExperiment(const Pipeline& pipeline, const Stage& stage,
                                             const std::vector<SynthesisRow>& rows,
                                             const std::vector<SynthesisTexts>& texts) {
  const SynthesisTemplate& t = FindTemplate(stage.params["template"].get<std::string>());
  SynthesisExperiment out;
  out.name = absl::StrCat(pipeline.name, ".", stage.name, ".", stage.id.substr(3, 12));
  Json spec_rows = Json::array();
  for (size_t i = 0; i < rows.size(); ++i) {
    const SynthesisTexts& x = texts[i];
    const std::string path = absl::StrCat("rows/", i, ".txt");
    // One pass over the template: a kernel that contains "{task}" stays as written.
    out.files[path] = absl::StrReplaceAll(t.user, {{"{task}", x.task_prompt},
                                                   {"{kernel}", x.kernel},
                                                   {"{wrong_kernel}", x.wrong_kernel},
                                                   {"{feedback}", x.wrong_feedback}});
    spec_rows.push_back({{"definition", rows[i].definition}, {"prompt_path", path}});
  }
  const Json spec = {{"name", out.name},
                     {"mode", "synthesis"},
                     {"models", {stage.params["model"]}},
                     {"system", t.system},
                     {"take", stage.params["take"]},
                     {"min_chars", stage.params["min_chars"]},
                     {"max_chars", stage.params["max_chars"]},
                     {"max_passes", stage.params["max_passes"]},
                     {"max_tokens", stage.params["max_tokens"]},
                     {"rows", spec_rows}};
  out.spec_json = spec.dump(1);
  return out;
}

Synthesis CollectSynthesis(const Stage& stage, const std::vector<SynthesisRow>& rows,
                           const std::vector<ptxbench::v1::Trajectory>& trajectories) {
  const bool reasoning = stage.params["take"] == "reasoning";
  std::map<int, const ptxbench::v1::Trajectory*> by_row;
  for (const ptxbench::v1::Trajectory& t : trajectories) by_row[t.summary().sample_index()] = &t;
  Synthesis out;
  int64_t synthesized = 0, passes = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const SynthesisRow& row = rows[i];
    Json line = {{"definition", row.definition}, {"kernel", TurnJson(row.kernel)},
                 {"source", row.source}};
    if (row.wrong) line["wrong"] = TurnJson(*row.wrong);
    auto t = by_row.find(static_cast<int>(i));
    std::string text;
    if (t != by_row.end()) {
      const ptxbench::v1::Trajectory& traj = *t->second;
      line["synthesis"] = {{"trajectory_id", traj.summary().trajectory_id()},
                           {"model", traj.summary().model()},
                           {"state", ptxbench::v1::TrajectoryState_Name(traj.summary().state())},
                           {"passes", traj.turns_size()}};
      passes += traj.turns_size();
      // The trajectory ends at the first answer within the bounds: its last.
      if (traj.summary().state() == ptxbench::v1::SUBMITTED && traj.turns_size() > 0) {
        const ptxbench::v1::LlmResponse& r = traj.turns(traj.turns_size() - 1).response();
        text = reasoning ? r.reasoning() : r.text();
      }
    }
    line["synthesized"] = !text.empty();
    if (!text.empty()) {
      ++synthesized;
      line["text"] = text;
      line["text_sha256"] = Sha256Hex(text);
      line["chars"] = text.size();
    }
    absl::StrAppend(&out.jsonl, line.dump(), "\n");
  }
  out.counts = {{"rows", rows.size()},
                {"synthesized", synthesized},
                {"not_synthesized", static_cast<int64_t>(rows.size()) - synthesized},
                {"passes", passes}};
  return out;
}

absl::StatusOr<std::vector<SynthesizedRow>> ReadSynthesisJsonl(absl::string_view text) {
  return internal::ReadJsonl<SynthesizedRow>(
      text, "synthesis.jsonl", "a synthesized row", [](const Json& j) {
        SynthesizedRow s;
        s.row.definition = j.at("definition").get<std::string>();
        s.row.kernel = TurnOf(j.at("kernel"));
        if (j.contains("wrong")) s.row.wrong = TurnOf(j.at("wrong"));
        s.row.source = j.at("source");
        s.synthesized = j.at("synthesized").get<bool>();
        if (s.synthesized) s.text = j.at("text").get<std::string>();
        return s;
      });
}

}  // namespace ptxbench::pipelines
