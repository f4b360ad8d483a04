// A solution JSON can be a model's answer (experiments in the solution
// language): parsing and checking any bytes must neither crash nor grow
// without bound.
#include <cstddef>
#include <cstdint>
#include <string>

#include "workloads/solution.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<ptxbench::workloads::Solution> s =
      ptxbench::workloads::ParseSolution(text, "fuzz");
  if (s.ok()) (void)ptxbench::workloads::CheckSolutionSupported(*s);
  (void)ptxbench::workloads::LooksLikeSolution(text);
  return 0;
}
