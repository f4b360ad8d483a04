#ifndef PTXBENCH_PIPELINES_DATASET_H_
#define PTXBENCH_PIPELINES_DATASET_H_

// The dataset stage (docs/PIPELINES.md): supervised fine-tuning records from
// a synthesize stage's rows, in PTXBench's two shapes, each message
// {role, content, step_loss_mask} as ptxbench's sft export writes them
// (docs/FORMATS.md "sft"), only the last with loss:
//  - fixit5: the wrong kernel's system prompt and task, its answer, the
//    feedback it got, then "<think>\nREASONING\n</think>\n\n" and the answer
//    that fixed it;
//  - kernelgen3: the system prompt and task, then the reasoning and the
//    correct answer the same way.
// Rows that were not synthesized are left out, and so are records longer
// than `max_chars` (token limits need the trainer's tokenizer: the lengths
// are recorded instead).

#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "pipelines/pipeline.h"
#include "pipelines/synthesize.h"

namespace ptxbench::pipelines {

// The texts a record holds besides the reasoning, read from the scheduler.
struct RecordTexts {
  std::string system_prompt;
  std::string task_prompt;
  std::string wrong_answer;    // fixit5
  std::string wrong_feedback;  // fixit5
  std::string answer;          // the fixed or correct answer
};

struct Dataset {
  std::string jsonl;  // sft.jsonl
  nlohmann::json counts;
};

// `texts[i]` are `rows[i]`'s (any for a row not synthesized).
Dataset BuildDataset(const Stage& stage, const std::vector<SynthesizedRow>& rows,
                     const std::vector<RecordTexts>& texts);

}  // namespace ptxbench::pipelines

#endif  // PTXBENCH_PIPELINES_DATASET_H_
