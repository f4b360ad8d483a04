#ifndef PTXBENCH_CLI_TERMINAL_PROGRESS_H_
#define PTXBENCH_CLI_TERMINAL_PROGRESS_H_

// Progress for a command that waits on one long step (an evaluation that
// builds, checks and times a kernel for minutes).

#include <functional>
#include <ostream>
#include <string>

#include "absl/time/time.h"

namespace ptxbench::cli {

// Runs `work` on another thread. On a terminal (`live`), redraws
// "<label> 12 s" on `err` every `tick` and clears the line at the end;
// otherwise writes "<label>" once, as a line. Returns when `work` has.
void WithElapsedProgress(std::ostream& err, bool live, const std::string& label,
                         const std::function<void()>& work, absl::Duration tick = absl::Seconds(1));

}  // namespace ptxbench::cli

#endif  // PTXBENCH_CLI_TERMINAL_PROGRESS_H_
