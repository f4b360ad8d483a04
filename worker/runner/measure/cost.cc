#include "worker/runner/measure/cost.h"

#include <algorithm>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace ptxbench::runner {
namespace {

absl::StatusOr<double> Elements(const workloads::TensorSpec& t,
                                const std::map<std::string, int64_t>& axes) {
  absl::StatusOr<std::vector<int64_t>> dims = workloads::TensorDims(t, axes);
  if (!dims.ok()) return dims.status();
  double n = 1;
  for (int64_t d : *dims) n *= static_cast<double>(d);
  return n;
}

absl::StatusOr<double> Axis(const std::map<std::string, int64_t>& axes,
                            const workloads::TensorSpec& t, size_t dim) {
  if (dim >= t.shape.size()) {
    return absl::InvalidArgumentError(absl::StrCat("tensor ", t.name, " has no dimension ", dim));
  }
  absl::StatusOr<std::vector<int64_t>> dims = workloads::TensorDims(t, axes);
  if (!dims.ok()) return dims.status();
  return static_cast<double>((*dims)[dim]);
}

absl::StatusOr<double> Flops(const workloads::Definition& d,
                             const std::map<std::string, int64_t>& axes) {
  if (d.op_type == "gemm" && !d.inputs.empty() && !d.outputs.empty()) {
    const workloads::TensorSpec& a = d.inputs[0];
    const workloads::TensorSpec& c = d.outputs[0];
    absl::StatusOr<double> m = Axis(axes, a, 0), k = Axis(axes, a, 1),
                           n = Axis(axes, c, c.shape.size() - 1);
    if (!m.ok() || !k.ok() || !n.ok()) return 0.0;
    return 2 * *m * *n * *k;
  }
  if (d.op_type == "attention" && !d.inputs.empty() && d.inputs[0].shape.size() == 4) {
    const workloads::TensorSpec& q = d.inputs[0];  // [B, H, S, D]
    double f = 4;
    for (size_t i = 0; i < 4; ++i) {
      absl::StatusOr<double> v = Axis(axes, q, i);
      if (!v.ok()) return 0.0;
      f *= *v;
    }
    f *= *Axis(axes, q, 2);  // S²
    if (workloads::IsCausal(d)) f /= 2;
    if (workloads::IsBackward(d)) f *= 2.5;
    return f;
  }
  return 0.0;
}

}  // namespace

std::optional<double> DtypeBytes(absl::string_view dtype) {
  static const std::map<std::string, double, std::less<>> kBytes = {
      {"float32", 4},       {"float16", 2},     {"bfloat16", 2}, {"float8_e4m3fn", 1},
      {"float8_e5m2", 1},   {"float4_e2m1", 0.5}, {"int64", 8},  {"int32", 4},
      {"int16", 2},         {"int8", 1},        {"bool", 1}};
  auto it = kBytes.find(dtype);
  if (it == kBytes.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<WorkloadCost> CostOf(const workloads::Definition& definition,
                                    const std::map<std::string, int64_t>& axes) {
  WorkloadCost cost;
  std::vector<const workloads::TensorSpec*> all;
  for (const auto& t : definition.inputs) all.push_back(&t);
  for (const auto& t : definition.outputs) all.push_back(&t);
  for (const workloads::TensorSpec* t : all) {
    std::optional<double> size = DtypeBytes(t->dtype);
    if (!size) return absl::InvalidArgumentError(absl::StrCat("tensor ", t->name, ": unknown dtype ", t->dtype));
    absl::StatusOr<double> n = t->is_scalar ? absl::StatusOr<double>(1.0) : Elements(*t, axes);
    if (!n.ok()) return n.status();
    cost.min_bytes += *n * *size;
  }
  absl::StatusOr<double> flops = Flops(definition, axes);
  if (!flops.ok()) return flops.status();
  cost.flops = *flops;
  return cost;
}

std::optional<GpuPeaks> PeaksFor(absl::string_view gpu_name) {
  // Vendor datasheet figures (dense bf16 tensor core, HBM bandwidth).
  if (absl::StrContains(gpu_name, "H200")) return GpuPeaks{989e12, 4.8e12};
  if (absl::StrContains(gpu_name, "H100") && absl::StrContains(gpu_name, "PCIe")) {
    return GpuPeaks{756e12, 2.0e12};
  }
  if (absl::StrContains(gpu_name, "H100")) return GpuPeaks{989e12, 3.35e12};
  return std::nullopt;
}

double RooflineFraction(const WorkloadCost& cost, const std::optional<GpuPeaks>& peaks,
                        double latency_ms) {
  if (!peaks || latency_ms <= 0) return 0;
  const double compute_s = cost.flops / peaks->flops_per_s;
  const double memory_s = cost.min_bytes / peaks->bytes_per_s;
  const double bound_s = std::max(compute_s, memory_s);
  return bound_s / (latency_ms * 1e-3);
}

}  // namespace ptxbench::runner
