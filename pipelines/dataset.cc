// The dataset stage (dataset.h).

#include "pipelines/dataset.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "common/hash.h"
#include "results/exports/sft_writer.h"

namespace ptxbench::pipelines {

Dataset BuildDataset(const Stage& stage, const std::vector<SynthesizedRow>& rows,
                     const std::vector<RecordTexts>& texts) {
  const bool fixit = stage.params["shape"] == "fixit5";
  // Absent when not set (pipeline.h: no default).
  const int64_t max_chars = stage.params.value("max_chars", int64_t{0});
  Dataset out;
  int64_t records = 0, not_synthesized = 0, too_long = 0, longest = 0;
  std::map<std::string, int64_t> by_definition;
  for (size_t i = 0; i < rows.size(); ++i) {
    const SynthesizedRow& s = rows[i];
    if (!s.synthesized) {
      ++not_synthesized;
      continue;
    }
    const RecordTexts& x = texts[i];
    // As the sft export writes its records (keys in its order).
    using exports::SftMessage;
    StrictJson messages = StrictJson::array(
        {SftMessage("system", x.system_prompt, 0), SftMessage("user", x.task_prompt, 0)});
    if (fixit) {
      messages.push_back(SftMessage("assistant", x.wrong_answer, 0));
      messages.push_back(SftMessage("user", x.wrong_feedback, 0));
    }
    messages.push_back(SftMessage(
        "assistant", absl::StrCat("<think>\n", s.text, "\n</think>\n\n", x.answer), 1));
    int64_t chars = 0;
    for (const StrictJson& m : messages) {
      chars += static_cast<int64_t>(m["content"].get<std::string>().size());
    }
    if (max_chars > 0 && chars > max_chars) {
      ++too_long;
      continue;
    }
    longest = std::max(longest, chars);
    nlohmann::json metadata = {{"definition", s.row.definition},
                     {"shape", stage.params["shape"]},
                     {"kernel", {{"trajectory_id", s.row.kernel.trajectory_id},
                                 {"turn", s.row.kernel.turn}}},
                     {"reasoning_sha256", Sha256Hex(s.text)},
                     {"answer_sha256", Sha256Hex(x.answer)},
                     {"chars", chars},
                     {"source", s.row.source}};
    if (s.row.wrong) {
      metadata["wrong"] = {{"trajectory_id", s.row.wrong->trajectory_id},
                           {"turn", s.row.wrong->turn}};
    }
    const StrictJson record = {
        {"id", absl::StrCat(s.row.kernel.trajectory_id, "_t", s.row.kernel.turn)},
        {"messages", std::move(messages)},
        {"metadata", StrictJson(std::move(metadata))}};
    absl::StrAppend(&out.jsonl, record.dump(), "\n");
    ++records;
    ++by_definition[s.row.definition];
  }
  out.counts = {{"rows", rows.size()},
                {"records", records},
                {"not_synthesized", not_synthesized},
                {"too_long", too_long},
                {"longest_chars", longest},
                {"definitions", by_definition}};
  return out;
}

}  // namespace ptxbench::pipelines
