// CheckHealth (runner.h): run by the worker in a fresh runner process after
// an evaluation failed, before the GPU gets another task.
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <ostream>

#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "worker/gpu/timing.h"
#include "worker/runner/harness/runner.h"
#include "workloads/reference/device_buffer.h"
#include "workloads/reference/device_compare.h"
#include "workloads/reference/gemm_reference.h"
#include "workloads/reference/random.h"

namespace ptxbench::runner {
namespace {

using gpu::CudaStatus;

// A GPU whose memory is mostly held by someone else (a process the driver
// has not reaped) cannot run the next evaluation properly.
constexpr double kMinFreeFraction = 0.5;

absl::StatusOr<std::string> Probe() {
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(0), "cudaSetDevice(0)"));
  cudaDeviceProp prop{};
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties"));
  size_t free_bytes = 0, total_bytes = 0;
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo"));
  const std::string memory = absl::StrFormat("%.1f GiB free of %.1f GiB", free_bytes / 1073741824.0,
                                             total_bytes / 1073741824.0);
  if (static_cast<double>(free_bytes) < kMinFreeFraction * static_cast<double>(total_bytes)) {
    return absl::ResourceExhaustedError(absl::StrCat(prop.name, ": only ", memory));
  }
  // A small GEMM through cuBLAS against the fp32 kernel: context, memory,
  // kernels and the library all work.
  constexpr int kN = 128;
  PTXB_ASSIGN_OR_RETURN(auto a, reference::DeviceBuffer<__nv_bfloat16>::Allocate(kN * kN));
  PTXB_ASSIGN_OR_RETURN(auto b, reference::DeviceBuffer<__nv_bfloat16>::Allocate(kN * kN));
  PTXB_ASSIGN_OR_RETURN(auto c, reference::DeviceBuffer<__nv_bfloat16>::Allocate(kN * kN));
  PTXB_ASSIGN_OR_RETURN(auto c32, reference::DeviceBuffer<float>::Allocate(kN * kN));
  PTXB_RETURN_IF_ERROR(reference::FillStandardNormal(a.get(), kN * kN, 1, nullptr));
  PTXB_RETURN_IF_ERROR(reference::FillStandardNormal(b.get(), kN * kN, 2, nullptr));
  PTXB_ASSIGN_OR_RETURN(auto gemm, reference::CublasGemm::Create());
  PTXB_RETURN_IF_ERROR(gemm->Run(a.get(), b.get(), c.get(), kN, kN, kN, nullptr));
  PTXB_RETURN_IF_ERROR(reference::GemmFp32Reference(a.get(), b.get(), c32.get(), kN, kN, kN, nullptr));
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaDeviceSynchronize(), "cudaDeviceSynchronize"));
  PTXB_ASSIGN_OR_RETURN(reference::CompareResult r,
                        reference::CompareOnDevice(c.get(), c32.get(), kN * kN));
  if (!r.passed) {
    return absl::InternalError(absl::StrFormat("self-test GEMM is wrong (max abs error %g)",
                                               r.max_abs_error));
  }
  return absl::StrCat(prop.name, ", ", memory);
}

}  // namespace

int CheckHealth(std::ostream& out) {
  absl::StatusOr<std::string> probe = Probe();
  if (!probe.ok()) {
    out << "unhealthy: " << probe.status().message() << "\n";
    return 1;
  }
  out << "healthy: " << *probe << "\n";
  return 0;
}

}  // namespace ptxbench::runner
