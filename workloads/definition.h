#ifndef PTXBENCH_WORKLOADS_DEFINITION_H_
#define PTXBENCH_WORKLOADS_DEFINITION_H_

// A workload definition and its workloads, as in the FlashInfer-Trace schema
// (see shared COMPAT.md), plus the evaluation settings ptxbench adds.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxbench::workloads {

struct Axis {
  std::string name;
  bool is_const = false;
  int64_t value = 0;  // meaningful when is_const
};

// An input or output tensor (or scalar when shape is empty and is_scalar).
struct TensorSpec {
  std::string name;
  std::vector<std::string> shape;  // axis names
  bool is_scalar = false;          // "shape": null
  std::string dtype;               // "bfloat16", "float32", ...
};

// How results are judged (DESIGN §5; definitions may override the defaults).
struct Tolerance {
  double atol = 1e-2;
  double rtol = 1e-2;
  double required_matched_ratio = 1.0;
};

// Where a workload's input comes from.
struct InputSource {
  std::string type;  // "random", "scalar", "safetensors"
  double scalar_value = 0;
  std::string path;        // safetensors
  std::string tensor_key;  // safetensors
};

struct Workload {
  std::string uuid;
  std::map<std::string, int64_t> axes;  // values of the var axes
  std::map<std::string, InputSource> inputs;
};

struct Definition {
  std::string name;
  std::string op_type;
  std::vector<std::string> tags;
  std::string description;
  std::vector<Axis> axes;             // in file order
  std::vector<TensorSpec> inputs;     // in file order (= run() argument order)
  std::vector<TensorSpec> outputs;    // in file order
  std::string reference;              // PyTorch source defining run()
  std::vector<std::string> constraints;
  Tolerance tolerance;
  int trials = 3;
  double importance = 1.0;            // weight in aggregate scores
  std::vector<Workload> workloads;    // from the workloads JSONL
  std::string json;                   // the definition file's text, as read

  // All axis values of `w` (const axes included), or an error naming the
  // axis that has no value.
  absl::StatusOr<std::map<std::string, int64_t>> AxisValues(const Workload& w) const;
};

// Parses one definition JSON document. `origin` names the file in errors.
absl::StatusOr<Definition> ParseDefinition(absl::string_view json,
                                           absl::string_view origin);

// Parses one workload JSONL line. `origin` names file and line in errors.
absl::StatusOr<Workload> ParseWorkloadLine(absl::string_view line,
                                           absl::string_view origin);

// A workload line as read: the definition it names, and the workload.
struct WorkloadRecord {
  std::string definition;
  Workload workload;
};
absl::StatusOr<WorkloadRecord> ParseWorkloadRecord(absl::string_view line,
                                                   absl::string_view origin);

// Checks `workload` against `definition`: every var axis has a value, no
// unknown axis (a const axis may be repeated with its own value), and every
// input has a source and no source names an unknown input.
absl::Status ValidateWorkload(const Definition& definition, const Workload& workload,
                              absl::string_view origin);

// Whether every workload's inputs can be made as specified: today only
// "random" sources are (the GPU harness draws them from its seed); a
// workload whose inputs come from a safetensors file or a scalar value would
// otherwise run on inputs it does not specify. kUnimplemented naming the
// definition, workload, input and source.
absl::Status CheckInputSourcesSupported(const Definition& definition);

// The dtypes of the FlashInfer-Trace schema.
bool IsKnownDtype(absl::string_view dtype);

}  // namespace ptxbench::workloads

#endif  // PTXBENCH_WORKLOADS_DEFINITION_H_
