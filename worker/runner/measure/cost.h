#ifndef PTXBENCH_WORKER_RUNNER_MEASURE_COST_H_
#define PTXBENCH_WORKER_RUNNER_MEASURE_COST_H_

// The roofline of docs/MEASUREMENT.md ("Timing"): what a workload must do
// (FLOPs, minimum bytes moved) and what a GPU can do (peaks), so every result
// also reports the fraction of roofline reached. Plain C++.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "workloads/definition.h"

namespace ptxbench::runner {

struct WorkloadCost {
  double flops = 0;      // 0 when the op type has no FLOP model
  double min_bytes = 0;  // every input read once, every output written once
};

// FLOP models (WORKLOADS.md): gemm 2·M·N·K (M, N, K from A [M,K] and the
// output's last axis); attention forward 4·B·H·S²·D, half when causal;
// backward 2.5x the forward (workloads::IsCausal, IsBackward). Other op types: bytes only.
// kInvalidArgument for an unknown dtype or a missing axis value.
absl::StatusOr<WorkloadCost> CostOf(const workloads::Definition& definition,
                                    const std::map<std::string, int64_t>& axes);

// Dense tensor-core bf16 FLOP/s and memory bandwidth of a GPU model.
struct GpuPeaks {
  double flops_per_s = 0;
  double bytes_per_s = 0;
};
// From the table (H100 SXM, H100 PCIe, H200) by the driver's device name;
// nullopt for a GPU it does not know (then the roofline fraction is 0).
std::optional<GpuPeaks> PeaksFor(absl::string_view gpu_name);

// Roofline time / measured time, in (0, 1] for a plausible measurement; 0
// when anything is unknown.
double RooflineFraction(const WorkloadCost& cost, const std::optional<GpuPeaks>& peaks,
                        double latency_ms);

// Bytes per element of a FlashInfer-Trace dtype (0.5 for float4_e2m1);
// nullopt for an unknown one.
std::optional<double> DtypeBytes(absl::string_view dtype);

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_MEASURE_COST_H_
