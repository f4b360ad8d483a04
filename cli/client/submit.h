#ifndef PTXBENCH_CLI_CLIENT_SUBMIT_H_
#define PTXBENCH_CLI_CLIENT_SUBMIT_H_

// Submitting a spec file, shared by `submit` and `up --submit`.

#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "cli/client/client.h"

namespace ptxbench::cli {

// Reads a spec file ("-" = stdin); the error names the file.
absl::StatusOr<std::string> ReadSpecFile(const std::string& path);

// Reads `path`, submits it with the options of `request` (name, definition,
// model, dry_run) and reports on `out`: a summary and the experiment id as the
// last line, or with `json` the object {"experiment", "created",
// "trajectories"} (and "dry_run" when set). With `hub` (a PTXBench hub.json
// or its folder), the hub's tags the spec names go with it, as the hub
// assembles them (the scheduler needs no hub of its own for them). Notes
// (the fields of a PTXBench experiment.json that ptxbench ignores) go to
// `err`. Returns the experiment id.
absl::StatusOr<std::string> SubmitSpecFile(SchedulerClient& client, const std::string& path,
                                           v1::SubmitExperimentRequest request, bool json,
                                           std::ostream& out, std::ostream& err,
                                           const std::string& hub = "");

}  // namespace ptxbench::cli

#endif  // PTXBENCH_CLI_CLIENT_SUBMIT_H_
