#include "worker/runner/workload_eval.h"

#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "worker/gpu/timing.h"

namespace ptxbench::runner {
namespace {

using gpu::CudaStatus;

// The value of element `index` of `t`, as float (a one-element copy).
float ElementValue(const TensorBuffer& t, int64_t index) {
  if (t.type == ElementType::kBFloat16) {
    __nv_bfloat16 v;
    if (cudaMemcpy(&v, static_cast<const __nv_bfloat16*>(t.data()) + index, sizeof(v),
                   cudaMemcpyDeviceToHost) != cudaSuccess) {
      return NAN;
    }
    return __bfloat162float(v);
  }
  float v = NAN;
  cudaMemcpy(&v, static_cast<const float*>(t.data()) + index, sizeof(v), cudaMemcpyDeviceToHost);
  return v;
}

}  // namespace

absl::StatusOr<WorkloadBuffers> WorkloadBuffers::Allocate(
    const workloads::Definition& definition, const std::map<std::string, int64_t>& axes,
    bool with_checks) {
  PTXB_ASSIGN_OR_RETURN(int64_t in_bytes, TensorBytes(definition.inputs, axes));
  PTXB_ASSIGN_OR_RETURN(int64_t out_bytes, TensorBytes(definition.outputs, axes));
  const int64_t need = kSets * (in_bytes + out_bytes) + (with_checks ? kSets * out_bytes + in_bytes : 0);
  size_t free_bytes = 0, total_bytes = 0;
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo"));
  // Leave room for the libraries' workspaces and the candidate's own.
  if (static_cast<double>(need) > 0.8 * static_cast<double>(free_bytes)) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "the workload needs %.2f GiB of buffers; the GPU has %.2f GiB free", need / 1073741824.0,
        free_bytes / 1073741824.0));
  }
  WorkloadBuffers b;
  b.with_checks_ = with_checks;
  for (int s = 0; s < kSets; ++s) {
    PTXB_ASSIGN_OR_RETURN(b.inputs_[s], TensorSet::Allocate(definition.inputs, axes));
    PTXB_ASSIGN_OR_RETURN(b.outputs_[s], TensorSet::Allocate(definition.outputs, axes));
    if (with_checks) {
      PTXB_ASSIGN_OR_RETURN(b.expected_[s], TensorSet::Allocate(definition.outputs, axes));
    }
  }
  if (with_checks) {
    PTXB_ASSIGN_OR_RETURN(b.pristine_, TensorSet::Allocate(definition.inputs, axes));
  }
  b.BuildViews();
  return b;
}

void WorkloadBuffers::BuildViews() {
  for (int s = 0; s < kSets; ++s) {
    views_[s].clear();
    for (const TensorBuffer& t : inputs_[s].tensors()) views_[s].push_back(&t.view);
    for (const TensorBuffer& t : outputs_[s].tensors()) views_[s].push_back(&t.view);
  }
}

absl::Status WorkloadBuffers::Prepare(Reference& reference, int set, uint64_t seed,
                                      cudaStream_t stream) {
  std::vector<TensorBuffer>& in = inputs_[set].tensors();
  PTXB_RETURN_IF_ERROR(reference.FillInputs(seed, in, stream));
  if (!with_checks_) return absl::OkStatus();
  std::vector<TensorBuffer>& copy = pristine_.tensors();
  for (size_t i = 0; i < in.size(); ++i) {
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaMemcpyAsync(copy[i].data(), in[i].data(), in[i].bytes,
                                                    cudaMemcpyDeviceToDevice, stream),
                                    "copy of the inputs"));
  }
  PTXB_RETURN_IF_ERROR(reference.Run(in, expected_[set].tensors(), stream));
  // All-ones bytes are NaN in bfloat16 and float32: an element the kernel
  // does not write stays NaN and fails.
  for (TensorBuffer& out : outputs_[set].tensors()) {
    PTXB_RETURN_IF_ERROR(
        CudaStatus(cudaMemsetAsync(out.data(), 0xff, out.bytes, stream), "poisoning the outputs"));
  }
  return absl::OkStatus();
}

absl::StatusOr<CallCheck> WorkloadBuffers::Check(int set, const reference::Tolerance& tol,
                                                 cudaStream_t stream) {
  // Work the candidate left on other streams must be finished first.
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaDeviceSynchronize(), "cudaDeviceSynchronize(after run)"));
  CallCheck check;
  const std::vector<TensorBuffer>& out = outputs_[set].tensors();
  const std::vector<TensorBuffer>& expected = expected_[set].tensors();
  for (size_t o = 0; o < out.size(); ++o) {
    PTXB_ASSIGN_OR_RETURN(reference::CompareResult r,
                          CompareOnGpu(out[o].data(), expected[o].data(), out[o].type,
                                       out[o].count, tol, stream));
    check.max_abs_error = std::max(check.max_abs_error, r.max_abs_error);
    check.max_rel_error = std::max(check.max_rel_error, r.max_rel_error);
    check.matched_ratio = std::min(check.matched_ratio, r.matched_ratio());
    if (r.passed) continue;
    check.passed = false;
    const int64_t i = r.first_mismatch;
    if (r.nonfinite > 0) {
      check.errors.push_back(absl::StrFormat(
          "output %s: %d of %d elements are NaN/Inf (first at index %d: got %g, expected %g); "
          "outputs start as NaN, so every element must be written",
          out[o].name, r.nonfinite, r.total, i, ElementValue(out[o], i),
          ElementValue(expected[o], i)));
    } else {
      check.errors.push_back(absl::StrFormat(
          "output %s: %d of %d elements outside atol=%g, rtol=%g (matched ratio %.6f, required "
          "%g; first at index %d: got %g, expected %g; max abs error %g, max rel error %g)",
          out[o].name, r.total - r.matched, r.total, tol.atol, tol.rtol, r.matched_ratio(),
          tol.required_matched_ratio, i, ElementValue(out[o], i), ElementValue(expected[o], i),
          r.max_abs_error, r.max_rel_error));
    }
  }
  const std::vector<TensorBuffer>& in = inputs_[set].tensors();
  const std::vector<TensorBuffer>& copy = pristine_.tensors();
  for (size_t i = 0; i < in.size(); ++i) {
    PTXB_ASSIGN_OR_RETURN(int64_t changed,
                          CountChangedBytes(in[i].data(), copy[i].data(), in[i].bytes, stream));
    if (changed == 0) continue;
    check.passed = false;
    check.errors.push_back(absl::StrFormat(
        "input %s was modified (%d of %d bytes changed): run() must not write its inputs",
        in[i].name, changed, in[i].bytes));
  }
  return check;
}

}  // namespace ptxbench::runner
