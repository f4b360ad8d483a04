// Code extraction reads every model answer.
#include <cstddef>
#include <cstdint>
#include <string>

#include "scheduler/feedback/extract.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string answer(reinterpret_cast<const char*>(data), size);
  (void)ptxbench::scheduler::ExtractKernel(answer, "cuda");
  (void)ptxbench::scheduler::ExtractKernel(answer, "ptx");
  (void)ptxbench::scheduler::ExtractKernel(answer, "solution");
  (void)ptxbench::scheduler::ExtractKernel(answer, "triton");
  return 0;
}
