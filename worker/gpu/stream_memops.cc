#include "worker/gpu/stream_memops.h"

#include <cuda.h>

#include "absl/strings/str_cat.h"
#include "workloads/reference/driver_entry_point.h"

namespace ptxbench::gpu {
namespace {

absl::Status Check(int r, const char* what) {
  if (r == CUDA_SUCCESS) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, " failed (CUresult ", r, ")"));
}

unsigned long long Address(void* word) {
  return static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(word));
}

}  // namespace

absl::StatusOr<StreamMemOps> StreamMemOps::Load() {
  StreamMemOps ops;
  if (!reference::LoadDriverFunction(ops.write_, "cuStreamWriteValue32") ||
      !reference::LoadDriverFunction(ops.wait_, "cuStreamWaitValue32")) {
    return absl::FailedPreconditionError("the CUDA driver has no stream memory operations");
  }
  return ops;
}

absl::Status StreamMemOps::Write(cudaStream_t stream, void* word, uint32_t value) const {
  if (write_ == nullptr)
    return absl::FailedPreconditionError("stream memory operations not loaded");
  return Check(write_(stream, Address(word), value, CU_STREAM_WRITE_VALUE_DEFAULT),
               "cuStreamWriteValue32");
}

absl::Status StreamMemOps::Wait(cudaStream_t stream, void* word, uint32_t value,
                                unsigned int flags) const {
  if (wait_ == nullptr) return absl::FailedPreconditionError("stream memory operations not loaded");
  return Check(wait_(stream, Address(word), value, flags), "cuStreamWaitValue32");
}

absl::Status StreamMemOps::WaitEqual(cudaStream_t stream, void* word, uint32_t value) const {
  return Wait(stream, word, value, CU_STREAM_WAIT_VALUE_EQ);
}

absl::Status StreamMemOps::WaitAtLeast(cudaStream_t stream, void* word, uint32_t value) const {
  return Wait(stream, word, value, CU_STREAM_WAIT_VALUE_GEQ);
}

}  // namespace ptxbench::gpu
