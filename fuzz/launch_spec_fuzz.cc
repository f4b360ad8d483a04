// Launch specs and their expressions come from model answers (raw-PTX
// submissions): every input gets a value or one error, never a crash, a hang
// or a runaway allocation.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "workloads/launch_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::map<std::string, int64_t> axes = {{"M", 8192}, {"N", 7168}, {"K", 5120}};
  (void)ptxbench::workloads::EvaluateExpression(text, axes);
  (void)ptxbench::workloads::FindLaunchSpecJson(text);
  absl::StatusOr<ptxbench::workloads::LaunchSpec> spec = ptxbench::workloads::ParseLaunchSpec(text);
  if (spec.ok()) (void)ptxbench::workloads::Resolve(*spec, axes);
  return 0;
}
