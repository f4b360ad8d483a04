#ifndef PTXBENCH_PROCESS_OUTPUT_COLLECTOR_H_
#define PTXBENCH_PROCESS_OUTPUT_COLLECTOR_H_

// Reads a child's output from the read end of a pipe into memory, at most
// `max_bytes` of it: the rest is read and dropped, so the child never blocks
// on a full pipe and a chatty (or hostile) child cannot grow the parent's
// memory. Used by process::Run and by the sandbox's RunCommand. The
// descriptor stays the caller's; it is made non-blocking. Thread-compatible.

#include <cstddef>
#include <string>

#include "absl/time/time.h"

namespace ptxbench::process {

class OutputCollector {
 public:
  OutputCollector(int fd, size_t max_bytes);

  // Waits up to `at_most` for output, or for `wake_fd` (if not -1) to be
  // readable, e.g. a pidfd at the child's exit (once the pipe reached its end
  // only for that), then reads what is there. The pacing step of a caller's
  // loop.
  void Await(absl::Duration at_most, int wake_fd = -1);
  // Reads to the end of the output, giving up once none came for `quiet`
  // (a writer that escaped the caller's kill may still hold the pipe).
  void DrainToEnd(absl::Duration quiet);

  bool truncated() const { return truncated_; }
  // The output, followed by a note when it was truncated. Once.
  std::string Take();

 private:
  void Drain();

  const int fd_;
  const size_t max_bytes_;
  bool open_ = true;
  bool truncated_ = false;
  std::string output_;
};

}  // namespace ptxbench::process

#endif  // PTXBENCH_PROCESS_OUTPUT_COLLECTOR_H_
