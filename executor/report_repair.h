#ifndef PTXBENCH_EXECUTOR_REPORT_REPAIR_H_
#define PTXBENCH_EXECUTOR_REPORT_REPAIR_H_

// What an executor does to a message before the scheduler gets it, so that
// nothing it sends fails to parse there and no refused report goes
// unheard (docs/SECURITY.md, "Agent sessions"). Its outcomes carry text
// that hostile input wrote (an agent's file names, a CLI's last words, a
// kernel's compiler output): a proto3 `string` field that is not valid
// UTF-8 makes the whole message fail to parse at the receiver, and the
// scheduler never learns why.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"
#include "ptxbench/v1/executor.pb.h"

namespace ptxbench::executor {

// Makes every `string` field of `message` valid UTF-8 (nested, repeated and
// map fields included; `bytes` fields are left as they are), each run of
// bad bytes replaced by U+FFFD (common/utf8.h). Returns the paths of the
// fields it changed, "agent.records[3].name", for the log line that names
// them.
std::vector<std::string> MakeStringsValidUtf8(google::protobuf::Message* message);

// The report sent once more when the scheduler refused `refused` for a
// reason retrying cannot fix (anything but FAILED_PRECONDITION, the lease
// being gone): the same lease and outcome class, its reason (or failure
// message) prefixed with "the report could not be sent: `why`", and its
// usage and cost totals (an agent outcome's usage_since_last_eval, total,
// evaluations, times), without its records. An LLM answer or evaluation
// result becomes an INFRA failure saying so (the task runs again). So a
// trajectory ends with its reason and its calls charged, never as "lost".
ptxbench::v1::CompleteRequest MinimalReport(const ptxbench::v1::CompleteRequest& refused,
                                            absl::string_view why);

}  // namespace ptxbench::executor

#endif  // PTXBENCH_EXECUTOR_REPORT_REPAIR_H_
