#ifndef PTXBENCH_WORKER_COMPILE_PTXAS_LOG_H_
#define PTXBENCH_WORKER_COMPILE_PTXAS_LOG_H_

// Reads per-kernel resources out of `ptxas -v` output (direct, or through
// nvcc --ptxas-options=-v).

#include <vector>

#include "absl/strings/string_view.h"
#include "ptxbench/v1/common.pb.h"

namespace ptxbench::worker {

// One KernelResources per "Compiling entry function 'NAME'" line, filled from
// the "Used N registers, ... N bytes smem ..." line and the "N bytes stack
// frame, N bytes spill stores, N bytes spill loads" line that follow it.
// Non-entry functions are ignored. Order: as in the log.
std::vector<ptxbench::v1::KernelResources> ParsePtxasVerbose(absl::string_view log);

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_COMPILE_PTXAS_LOG_H_
