#include "process/output_collector.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace ptxbench::process {
namespace {

int ToPollMs(absl::Duration d) {
  return static_cast<int>(std::clamp<int64_t>(absl::ToInt64Milliseconds(d), 0, 60'000));
}

}  // namespace

OutputCollector::OutputCollector(int fd, size_t max_bytes) : fd_(fd), max_bytes_(max_bytes) {
  fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) | O_NONBLOCK);
}

void OutputCollector::Drain() {
  char buf[65536];
  while (true) {
    const ssize_t n = read(fd_, buf, sizeof(buf));
    if (n > 0) {
      const size_t room = max_bytes_ - std::min(max_bytes_, output_.size());
      if (static_cast<size_t>(n) > room) truncated_ = true;
      output_.append(buf, std::min(room, static_cast<size_t>(n)));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) open_ = false;
    return;  // end of file, or EAGAIN: more later
  }
}

void OutputCollector::Await(absl::Duration at_most, int wake_fd) {
  pollfd p[2];
  nfds_t n = 0;
  if (open_) p[n++] = pollfd{fd_, POLLIN, 0};
  if (wake_fd >= 0) p[n++] = pollfd{wake_fd, POLLIN, 0};
  if (n == 0) {
    absl::SleepFor(at_most);
    return;
  }
  poll(p, n, ToPollMs(at_most));
  if (open_) Drain();
}

void OutputCollector::DrainToEnd(absl::Duration quiet) {
  while (open_) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, ToPollMs(quiet)) <= 0) return;
    Drain();
  }
}

std::string OutputCollector::Take() {
  if (truncated_) absl::StrAppend(&output_, "\n[output truncated at ", max_bytes_, " bytes]\n");
  return std::move(output_);
}

}  // namespace ptxbench::process
