#include "worker/runner/measure/workload_eval.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "worker/gpu/timing.h"

namespace ptxbench::runner {
namespace {

using gpu::CudaStatus;

// The value of element `index` of `t` (a one-element copy); NaN when it
// cannot be read.
double ElementValue(const TensorBuffer& t, int64_t index) {
  const int64_t size = ElementBytes(t.dtype());
  unsigned char bytes[8] = {};
  if (cudaMemcpy(bytes, static_cast<const unsigned char*>(t.data()) + index * size, size,
                 cudaMemcpyDeviceToHost) != cudaSuccess) {
    return NAN;
  }
  auto as = [&bytes](auto v) {
    std::memcpy(&v, bytes, sizeof(v));
    return v;
  };
  switch (t.dtype()) {
    case ptxb::DType::kFloat32: return as(float{});
    case ptxb::DType::kFloat16: return __half2float(as(__half{}));
    case ptxb::DType::kBFloat16: return __bfloat162float(as(__nv_bfloat16{}));
    case ptxb::DType::kFloat8E4M3FN: return static_cast<float>(as(__nv_fp8_e4m3{}));
    case ptxb::DType::kFloat8E5M2: return static_cast<float>(as(__nv_fp8_e5m2{}));
    case ptxb::DType::kInt64: return static_cast<double>(as(int64_t{}));
    case ptxb::DType::kInt32: return as(int32_t{});
    case ptxb::DType::kInt16: return as(int16_t{});
    case ptxb::DType::kInt8: return as(int8_t{});
    case ptxb::DType::kBool: return as(uint8_t{});
    default: return NAN;
  }
}

bool IsFloat(ptxb::DType d) {
  return d == ptxb::DType::kFloat32 || d == ptxb::DType::kFloat16 || d == ptxb::DType::kBFloat16 ||
         d == ptxb::DType::kFloat8E4M3FN || d == ptxb::DType::kFloat8E5M2;
}

// Draws per distribution in KeepFiniteDistributions.
constexpr uint64_t kProbeDraws = 3;

}  // namespace

absl::StatusOr<WorkloadBuffers> WorkloadBuffers::Allocate(
    const workloads::Definition& definition, const std::map<std::string, int64_t>& axes,
    bool reference_host_computes) {
  using Sharing = reference::DeviceMemory::Sharing;
  PTXB_ASSIGN_OR_RETURN(int64_t in_bytes, TensorBytes(definition.inputs, axes));
  PTXB_ASSIGN_OR_RETURN(int64_t out_bytes, TensorBytes(definition.outputs, axes));
  const int64_t need = kSets * (in_bytes + out_bytes) + out_bytes + in_bytes;
  size_t free_bytes = 0, total_bytes = 0;
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo"));
  // Leave room for the libraries' workspaces and the hosts' own.
  if (static_cast<double>(need) > 0.6 * static_cast<double>(free_bytes)) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "the workload needs %.2f GiB of buffers; the GPU has %.2f GiB free", need / 1073741824.0,
        free_bytes / 1073741824.0));
  }
  WorkloadBuffers b;
  b.distributions_ = definition.input_distributions;
  for (int s = 0; s < kSets; ++s) {
    PTXB_ASSIGN_OR_RETURN(b.inputs_[s],
                          TensorSet::Allocate(definition.inputs, axes, Sharing::kByDescriptor));
    PTXB_ASSIGN_OR_RETURN(b.outputs_[s],
                          TensorSet::Allocate(definition.outputs, axes, Sharing::kByDescriptor));
  }
  const Sharing secrets = reference_host_computes ? Sharing::kByDescriptor : Sharing::kPrivate;
  PTXB_ASSIGN_OR_RETURN(b.expected_, TensorSet::Allocate(definition.outputs, axes, secrets));
  PTXB_ASSIGN_OR_RETURN(b.pristine_, TensorSet::Allocate(definition.inputs, axes, secrets));
  const size_t n_out = definition.outputs.size(), n_in = definition.inputs.size();
  PTXB_ASSIGN_OR_RETURN(b.counters_,
                        reference::DeviceMemory::Allocate(sizeof(CompareCounters) * n_out +
                                                          sizeof(unsigned long long) * n_in));
  return b;
}

absl::Status WorkloadBuffers::Fix(int index, const std::string& bytes) {
  const std::vector<TensorBuffer>& in = pristine_.tensors();
  if (index < 0 || index >= static_cast<int>(in.size()) ||
      static_cast<int64_t>(bytes.size()) != in[index].bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("a fixed value of ", bytes.size(), " bytes for input ", index));
  }
  fixed_.resize(in.size());
  if (fixed_[index].empty()) {
    PTXB_ASSIGN_OR_RETURN(fixed_[index], reference::DeviceMemory::Allocate(bytes.size()));
  }
  return CudaStatus(
      cudaMemcpy(fixed_[index].data(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice),
      "uploading a fixed input");
}

absl::Status WorkloadBuffers::Prepare(Reference& reference, uint64_t seed, bool expected,
                                      cudaStream_t stream) {
  return PrepareWith(reference, seed, DistributionOf(seed), expected, stream);
}

absl::StatusOr<std::vector<workloads::InputDistribution>> WorkloadBuffers::KeepFiniteDistributions(
    Reference& reference, uint64_t seed, cudaStream_t stream) {
  const std::vector<TensorBuffer>& expected = expected_.tensors();
  std::vector<workloads::InputDistribution> kept, dropped;
  for (workloads::InputDistribution d : distributions_) {
    if (d == workloads::InputDistribution::kNormal) {
      kept.push_back(d);
      continue;
    }
    bool finite = true;
    // A few draws: an outlier that overflows is not in every one.
    for (uint64_t draw = 0; finite && draw < kProbeDraws; ++draw) {
      PTXB_RETURN_IF_ERROR(PrepareWith(reference, seed + draw, d, /*expected=*/true, stream));
      // The expected outputs against themselves: the compare counts their
      // non-finite elements.
      for (size_t o = 0; o < expected.size(); ++o) {
        PTXB_RETURN_IF_ERROR(EnqueueCompare(expected[o].data(), expected[o].data(),
                                            expected[o].dtype(), expected[o].count, {},
                                            compare_slots() + o, stream));
      }
      std::vector<CompareCounters> counters(expected.size());
      PTXB_RETURN_IF_ERROR(CudaStatus(cudaStreamSynchronize(stream), "the distributions' probe"));
      PTXB_RETURN_IF_ERROR(CudaStatus(cudaMemcpy(counters.data(), compare_slots(),
                                                 sizeof(CompareCounters) * expected.size(),
                                                 cudaMemcpyDeviceToHost),
                                      "reading the distributions' probe"));
      finite = std::all_of(counters.begin(), counters.end(),
                           [](const CompareCounters& c) { return c.nonfinite == 0; });
    }
    (finite ? kept : dropped).push_back(d);
  }
  distributions_ = std::move(kept);
  return dropped;
}

absl::Status WorkloadBuffers::PrepareWith(Reference& reference, uint64_t seed,
                                          workloads::InputDistribution distribution,
                                          bool expected, cudaStream_t stream) {
  std::vector<TensorBuffer>& in = pristine_.tensors();
  std::vector<bool> fixed(in.size(), false);
  for (size_t i = 0; i < fixed_.size(); ++i) {
    if (fixed_[i].empty()) continue;
    fixed[i] = true;
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaMemcpyAsync(in[i].data(), fixed_[i].data(), in[i].bytes,
                                                    cudaMemcpyDeviceToDevice, stream),
                                    "copying a fixed input"));
  }
  PTXB_RETURN_IF_ERROR(reference.FillInputs(seed, distribution, in, fixed, stream));
  if (expected) PTXB_RETURN_IF_ERROR(reference.Run(in, expected_.tensors(), stream));
  return absl::OkStatus();
}

absl::Status WorkloadBuffers::Stage(int set, cudaStream_t stream) {
  std::vector<TensorBuffer>& from = pristine_.tensors();
  std::vector<TensorBuffer>& to = inputs_[set].tensors();
  for (size_t i = 0; i < from.size(); ++i) {
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaMemcpyAsync(to[i].data(), from[i].data(), from[i].bytes,
                                                    cudaMemcpyDeviceToDevice, stream),
                                    "staging the inputs"));
  }
  // All-ones bytes are NaN in every float dtype: an element the kernel does
  // not write stays NaN and fails. Integers have no NaN: their poison is -1
  // (bool: 255, no boolean) in set 0 and 0 in set 1, and calls alternate
  // sets, so an element never written fails unless its expected value is
  // both.
  for (TensorBuffer& out : outputs_[set].tensors()) {
    const int poison = IsFloat(out.dtype()) || set == 0 ? 0xff : 0x00;
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaMemsetAsync(out.data(), poison, out.bytes, stream),
                                    "poisoning the outputs"));
  }
  return absl::OkStatus();
}

absl::Status WorkloadBuffers::EnqueueChecks(int set, const reference::Tolerance& tol,
                                            cudaStream_t stream) {
  const std::vector<TensorBuffer>& out = outputs_[set].tensors();
  const std::vector<TensorBuffer>& expected = expected_.tensors();
  for (size_t o = 0; o < out.size(); ++o) {
    PTXB_RETURN_IF_ERROR(EnqueueCompare(out[o].data(), expected[o].data(), out[o].dtype(),
                                        out[o].count, tol, compare_slots() + o, stream));
  }
  const std::vector<TensorBuffer>& in = inputs_[set].tensors();
  const std::vector<TensorBuffer>& copy = pristine_.tensors();
  for (size_t i = 0; i < in.size(); ++i) {
    PTXB_RETURN_IF_ERROR(EnqueueCountChangedBytes(in[i].data(), copy[i].data(), in[i].bytes,
                                                  changed_slots() + i, stream));
  }
  return absl::OkStatus();
}

absl::StatusOr<CallCheck> WorkloadBuffers::ReadChecks(int set, const reference::Tolerance& tol) {
  const std::vector<TensorBuffer>& out = outputs_[set].tensors();
  const std::vector<TensorBuffer>& expected = expected_.tensors();
  const std::vector<TensorBuffer>& in = inputs_[set].tensors();
  std::vector<CompareCounters> counters(out.size());
  std::vector<unsigned long long> changed(in.size());
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaMemcpy(counters.data(), compare_slots(),
                                             sizeof(CompareCounters) * out.size(),
                                             cudaMemcpyDeviceToHost),
                                  "reading the output checks"));
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaMemcpy(changed.data(), changed_slots(),
                                             sizeof(unsigned long long) * in.size(),
                                             cudaMemcpyDeviceToHost),
                                  "reading the input checks"));
  CallCheck check;
  for (size_t o = 0; o < out.size(); ++o) {
    const reference::CompareResult r = CompareResultOf(counters[o], out[o].count, tol);
    check.max_abs_error = std::max(check.max_abs_error, r.max_abs_error);
    check.max_rel_error = std::max(check.max_rel_error, r.max_rel_error);
    check.matched_ratio = std::min(check.matched_ratio, r.matched_ratio());
    if (r.passed) continue;
    check.passed = false;
    const int64_t i = std::max<int64_t>(r.first_mismatch, 0);
    if (r.nonfinite > 0) {
      check.errors.push_back(absl::StrFormat(
          "output %s: %d of %d elements are NaN/Inf (first at index %d: got %g, expected %g); "
          "outputs start as NaN, so every element must be written",
          out[o].name, r.nonfinite, r.total, i, ElementValue(out[o], i),
          ElementValue(expected[o], i)));
    } else if (r.matched_ratio() < tol.required_matched_ratio) {
      check.errors.push_back(absl::StrFormat(
          "output %s: %d of %d elements outside atol=%g, rtol=%g (matched ratio %.6f, required "
          "%g; first at index %d: got %g, expected %g; max abs error %g, max rel error %g)",
          out[o].name, r.total - r.matched, r.total, tol.atol, tol.rtol, r.matched_ratio(),
          tol.required_matched_ratio, i, ElementValue(out[o], i), ElementValue(expected[o], i),
          r.max_abs_error, r.max_rel_error));
    } else if (r.constant()) {
      check.errors.push_back(absl::StrFormat(
          "output %s: every one of its %d elements is %g, where the reference's vary (%d of "
          "them differ from its first, %g): a constant output is incorrect however small the "
          "tolerance makes its difference",
          out[o].name, r.total, ElementValue(out[o], 0), r.expected_varying,
          ElementValue(expected[o], 0)));
    } else {  // r.unrelated()
      check.errors.push_back(absl::StrFormat(
          "output %s: its elements are within atol=%g, rtol=%g, but the output as a whole does "
          "not follow the reference's: its relative L2 error ||out - ref|| / ||ref|| over them "
          "is %.3g (at most %g; all zeros would be 1)",
          out[o].name, tol.atol, tol.rtol, r.relative_l2(),
          reference::CompareResult::kMaxRelativeL2));
    }
  }
  for (size_t i = 0; i < in.size(); ++i) {
    if (changed[i] == 0) continue;
    check.passed = false;
    check.errors.push_back(absl::StrFormat(
        "input %s was modified (%d of %d bytes changed): run() must not write its inputs",
        in[i].name, changed[i], in[i].bytes));
  }
  return check;
}

absl::StatusOr<WorkloadBuffers::Exported> WorkloadBuffers::Export() const {
  Exported out;
  auto fail = [&out](absl::Status s) {
    for (int fd : out.descriptors) close(fd);
    return s;
  };
  const size_t n_in = inputs_[0].tensors().size();
  const size_t n = n_in + outputs_[0].tensors().size();
  if (2 * n > protocol::kMaxDescriptors) {
    return absl::UnimplementedError(absl::StrCat("a definition of ", n, " tensors (at most ",
                                                 protocol::kMaxDescriptors / 2, ")"));
  }
  for (size_t k = 0; k < n; ++k) {
    protocol::TensorMeta m;
    for (int s = 0; s < kSets; ++s) {
      const TensorBuffer& t = k < n_in ? inputs_[s].tensors()[k] : outputs_[s].tensors()[k - n_in];
      absl::StatusOr<int> fd = t.ExportDescriptor();
      if (!fd.ok()) return fail(fd.status());
      out.descriptors.push_back(*fd);
      m.allocated[s] = t.allocated();
      if (s == 0) {
        m.name = t.name;
        m.dtype = static_cast<int>(t.view.dtype);
        m.sizes.assign(t.view.sizes, t.view.sizes + t.view.ndim);
      }
    }
    out.tensors.push_back(std::move(m));
  }
  return out;
}

}  // namespace ptxbench::runner
