#ifndef PTXBENCH_CLI_VIEWS_WATCH_H_
#define PTXBENCH_CLI_VIEWS_WATCH_H_

// Following an experiment live (`status EXP --watch`, `up --submit`): on a
// terminal a frame redrawn in place (progress bar, counts by state, recent
// events); elsewhere one line per update (one JSON object per line with
// --output json).

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/client/client.h"

namespace ptxbench::cli {

struct WatchOptions {
  bool json = false;
  bool terminal = false;     // redraw in place with ANSI escapes
  int terminal_columns = 0;  // cut frame lines to this width (0 = no cut)
  // Called on every update; the lines it returns are shown as notes (e.g.
  // "worker-1 exited with code 2"). May be empty.
  std::function<std::vector<std::string>()> poll_notes;
};

enum class WatchEnd { kFinished, kInterrupted };

// Follows `experiment_id` until it finishes or Ctrl-C / SIGTERM (handlers
// installed here). Errors: unknown experiment, scheduler gone.
absl::StatusOr<WatchEnd> FollowExperiment(SchedulerClient& client, const std::string& experiment_id,
                                          const WatchOptions& options, std::ostream& out);

// Columns of the terminal on stdout (0 when unknown).
int TerminalColumns();

}  // namespace ptxbench::cli

#endif  // PTXBENCH_CLI_VIEWS_WATCH_H_
