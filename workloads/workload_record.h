#ifndef PTXBENCH_WORKLOADS_WORKLOAD_RECORD_H_
#define PTXBENCH_WORKLOADS_WORKLOAD_RECORD_H_

// Workload lines written back: the inverse of ParseWorkloadRecord
// (workloads/definition.h), so that whatever serves or exports workloads
// (DefinitionDocument.workload_lines, `ptxbench export`) writes the same
// FlashInfer-Trace shape the registry reads:
//   {"definition": "gemm_n7168_k5120", "solution": null,
//    "workload": {"uuid": "...", "axes": {"M": 70},
//                 "inputs": {"A": {"type": "random"}, ...}},
//    "evaluation": null}

#include <string>

#include "absl/strings/string_view.h"
#include "common/json_reader.h"
#include "workloads/definition.h"

namespace ptxbench::workloads {

// The "workload" object: {uuid, axes, inputs}. Axes and inputs in name
// order (Workload keeps them in maps). A scalar keeps its kind: an integer
// stays an integer, a boolean a boolean, and a float that happens to be
// integral is written with a fraction ("2.0") so it reads back as a float.
// Safetensors paths are written as given (relative to the dataset root),
// never resolved_path.
StrictJson WorkloadJson(const Workload& workload);

// One workload line, without the newline. ParseWorkloadRecord reads it back
// to the same definition and workload (resolved_path aside).
std::string FormatWorkloadRecord(absl::string_view definition, const Workload& workload);

}  // namespace ptxbench::workloads

#endif  // PTXBENCH_WORKLOADS_WORKLOAD_RECORD_H_
