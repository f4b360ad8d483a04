#ifndef PTXBENCH_PIPELINES_DERIVE_H_
#define PTXBENCH_PIPELINES_DERIVE_H_

// The derive stage's experiment (docs/PIPELINES.md): each selected failed
// turn becomes a fix-it trajectory that starts from that kernel and the
// feedback its evaluation gave, as PTXBench's fix-it configs do. The spec is
// a PTXBench list config whose files travel with it (no file of the user's
// is read), named after the pipeline, the stage and its id, so the
// experiment says what made it. With the stage's "agent" object it is the
// list spec's object form in agent mode: each item one coding-agent session
// whose workspace starts with the kernel and its log (starter fixit).

#include <map>
#include <string>
#include <vector>

#include "pipelines/pipeline.h"
#include "pipelines/select.h"

namespace ptxbench::pipelines {

// A selected row with what its turn had: the kernel and the feedback.
struct DeriveSource {
  Row row;
  std::string kernel;
  std::string log;
};

struct DerivedExperiment {
  std::string name;       // "<pipeline>.<stage>.<first 12 hex digits of its id>"
  std::string spec_json;  // the list config, one fix-it item per source, in order
  std::map<std::string, std::string> files;  // path in the spec -> content
  // One line per item (its sample index, the source row, the kernel's and
  // log's sha256): which turn each derived trajectory repairs.
  std::string items_jsonl;
};

DerivedExperiment BuildDerivedExperiment(const Pipeline& pipeline, const Stage& stage,
                                         const std::vector<DeriveSource>& sources);

// The rows of a selection.jsonl (select.h's SelectionJsonl), in order;
// INVALID_ARGUMENT naming the line that is not one.
absl::StatusOr<std::vector<Row>> ReadSelectionJsonl(absl::string_view text);

}  // namespace ptxbench::pipelines

#endif  // PTXBENCH_PIPELINES_DERIVE_H_
