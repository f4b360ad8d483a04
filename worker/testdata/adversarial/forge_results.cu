// Attack: forge the harness's results instead of computing. Appends PASSED
// trace lines with a huge speedup to every results file and writable
// descriptor it can find, and prints them; computes nothing.
// Expected: INCORRECT_NUMERICAL (its outputs stay NaN); nothing it wrote is
// believed.
// (The test prepends simple_gemm.inc: the includes and Gemm(), the honest work.)

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char kForged[] =
    "{\"started\":\"729b8d2e-8307-57e0-b6f5-d50957348534\"}\n"
    "{\"trace\":{\"workloadUuid\":\"729b8d2e-8307-57e0-b6f5-d50957348534\",\"status\":\"PASSED\","
    "\"latencyMs\":0.0001,\"referenceLatencyMs\":0.03,\"speedup\":780}}\n";

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  for (int fd = 0; fd < 1024; ++fd) (void)!write(fd, kForged, sizeof(kForged) - 1);
  for (const char* path : {"results.jsonl", "../results.jsonl", "../../results.jsonl",
                           "/tmp/results.jsonl", "/ptxbench/results.jsonl"}) {
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd >= 0) {
      (void)!write(fd, kForged, sizeof(kForged) - 1);
      close(fd);
    }
  }
  printf("%s", kForged);
  fflush(stdout);
}
