#ifndef PTXBENCH_WORKLOADS_DEFINITION_H_
#define PTXBENCH_WORKLOADS_DEFINITION_H_

// A workload definition and its workloads, as in the FlashInfer-Trace schema
// (docs/FORMATS.md, "Definitions"), plus the evaluation settings ptxbench adds.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "workloads/input_distribution.h"

namespace ptxbench::workloads {

struct Axis {
  std::string name;
  bool is_const = false;
  int64_t value = 0;  // meaningful when is_const
};

// An input or output tensor (or scalar when shape is empty and is_scalar).
struct TensorSpec {
  std::string name;
  // One entry per dimension: an axis name, or an integer expression over
  // axis names ("qk_nope_head_dim + v_head_dim"; workloads/expression.h).
  std::vector<std::string> shape;
  bool is_scalar = false;          // "shape": null
  std::string dtype;               // "bfloat16", "float32", ...
};

// How results are judged (docs/MEASUREMENT.md, "Correctness checks";
// definitions may override the defaults).
struct Tolerance {
  double atol = 1e-2;
  double rtol = 1e-2;
  double required_matched_ratio = 1.0;
};

// Where a workload's input comes from.
struct InputSource {
  std::string type;  // "random", "scalar", "safetensors"
  // A scalar as the JSON had it: FlashInfer-Bench passes the raw number (an
  // integer, a float or a boolean), not a value cast to the input's dtype.
  enum class ScalarKind { kFloat, kInt, kBool };
  ScalarKind scalar_kind = ScalarKind::kFloat;
  double scalar_value = 0;  // every kind
  int64_t scalar_int = 0;   // kInt and kBool, exactly
  std::string path;        // safetensors, as written (relative to the dataset root)
  std::string tensor_key;  // safetensors
  std::string resolved_path;  // safetensors: absolute, set by the registry
};

// A scalar source's value as JSON, exactly ("true", "3", "1e-06"): the
// shortest decimal that reads back as the same double.
std::string ScalarJson(const InputSource& source);

struct Workload {
  std::string uuid;  // any non-empty id (FlashInfer-Trace ids need not be UUIDs)
  std::map<std::string, int64_t> axes;  // values of the var axes
  std::map<std::string, InputSource> inputs;
  // Its weight among the definition's workloads in the scores
  // (docs/REPORTS.md, "Scores"): "workload": {"importance": 2.5}, a
  // ptxbench field that FlashInfer-Bench's reader ignores. 1 by default.
  double importance = 1.0;
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
  // The distributions its calls' random float inputs are drawn from
  // (input_distribution.h); "input_distributions" in the file, default all.
  std::vector<InputDistribution> input_distributions = AllInputDistributions();
  std::vector<Workload> workloads;    // from the workloads JSONL
  std::string json;                   // the definition file's text, as read
  // Provenance, set by the registry: the dataset root it came from ("bundled"
  // for ptxbench's own) and its version, the sha256 of the definition file
  // and of its workload lines, so a result says exactly what it ran.
  std::string dataset;
  std::string version;

  // All axis values of `w` (const axes included), or an error naming the
  // axis that has no value.
  absl::StatusOr<std::map<std::string, int64_t>> AxisValues(const Workload& w) const;
};

// The extents of `tensor` at `axis_values` (every axis, const ones included):
// each shape entry's axis value or expression value. kInvalidArgument naming
// the tensor when an entry fails or is negative.
absl::StatusOr<std::vector<int64_t>> TensorDims(const TensorSpec& tensor,
                                                const std::map<std::string, int64_t>& axis_values);

// The semantic tags of a definition. Tags are "namespace:value" or a bare
// flag; these change what the native references compute:
//   causal:   "causal", "causal:true", "mask:causal"     (false: "causal:false")
//   backward: "backward", "direction:backward", "stage:backward"
//             (forward: "direction:forward")
// Contradicting tags are refused when the definition is parsed.
bool IsCausal(const Definition& d);
bool IsBackward(const Definition& d);

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

// Whether experiments and evaluations can use `definition`: the GPU harness
// holds every dtype of its inputs and outputs (not float4_e2m1 yet), it has
// workloads (a dataset may define an operator before any workload is
// recorded), and every workload's inputs can be made exactly as specified:
//  - "random": drawn by the GPU harness from its seed;
//  - "scalar": only for a scalar input (shape null), with a value of its
//    dtype (a boolean for bool only, an integer in range for an integer
//    dtype, a finite value of a float dtype);
//  - "safetensors": the file (resolved_path) holds tensor_key with exactly
//    the input's dtype and the workload's shape (read from its header only).
// Otherwise the workload would run on inputs it does not specify, so it is
// refused: kFailedPrecondition naming the definition (and the input or
// output, or the workload, input and file) and what differs.
absl::Status CheckUsable(const Definition& definition);

// The dtypes of the FlashInfer-Trace schema.
bool IsKnownDtype(absl::string_view dtype);

}  // namespace ptxbench::workloads

#endif  // PTXBENCH_WORKLOADS_DEFINITION_H_
