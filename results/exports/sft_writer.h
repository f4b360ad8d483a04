#ifndef PTXBENCH_RESULTS_EXPORTS_SFT_WRITER_H_
#define PTXBENCH_RESULTS_EXPORTS_SFT_WRITER_H_

// The sft export: supervised fine-tuning records that end with a correct
// kernel (docs/FORMATS.md, "Exports"):
//   sft.jsonl           one record per chosen correct turn:
//                       {id, messages: [{role, content, step_loss_mask}], metadata}
//   sft.manifest.json   the experiments it came from, the filter, counts, and
//                       the sha256 of every other file written
// A record for turn t holds the conversation up to and including t's
// answer: the system prompt, the task, the earlier answers with the
// feedback each got, and t's answer, the only message with loss
// (step_loss_mask 1). Options::sft_filter picks the turns.

#include <memory>

#include <string>

#include "absl/status/statusor.h"
#include "common/json_reader.h"
#include "results/exports/export.h"
#include "results/exports/output_dir.h"

namespace ptxbench::exports {

// One message of an sft record, keys in this order: {role, content,
// step_loss_mask} (a pipeline's dataset stage writes the same records).
StrictJson SftMessage(const char* role, const std::string& content, int loss);

absl::StatusOr<std::unique_ptr<Writer>> MakeSftWriter(std::unique_ptr<OutputDir> dir,
                                                      const Options& options);

}  // namespace ptxbench::exports

#endif  // PTXBENCH_RESULTS_EXPORTS_SFT_WRITER_H_
