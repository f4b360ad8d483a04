#ifndef PTXBENCH_AGENT_GATEWAY_AGENT_SESSION_RECORD_H_
#define PTXBENCH_AGENT_GATEWAY_AGENT_SESSION_RECORD_H_

// What a session leaves for the record (docs/AGENTS.md, "Records"), each
// file capped so that one session's record stays under 20 MiB (8 + 1 + at
// worst 7, a line's bodies written as JSON escapes, + 2 + 1; the scheduler
// takes messages of up to 64 MiB):
//   events.jsonl        the CLI's event stream (its stdout), 8 MiB
//   stderr.txt          the last 1 MiB of its stderr
//   model_calls.jsonl   one line per model call the proxy saw: target,
//                       status, refusal, the policy's edits, usage, cost,
//                       latency, and request and answer bodies (256 KiB
//                       each; none once the file passes 4 MiB; no more
//                       lines past 5 MiB, a last line counting them)
//   home/...            the CLI's own session files under its HOME
//                       (*.json, *.jsonl; 2 MiB in all)
//   workspace/...       its final workspace (files up to 256 KiB, 1 MiB in all)
//   home.notes, workspace.notes   what the walk of that tree left out or
//                       recorded under an escaped name; only when it did
//
// The two trees are the agent's to fill: each is walked with the bounds of
// TreeLimits, breadth-first from one directory descriptor, never following
// a link and never opening anything but directories and regular files. A
// file name that is not UTF-8 is recorded escaped (common/utf8.h), so
// every record name is valid UTF-8.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "agent_gateway/agent/model_proxy.h"
#include "ptxbench/v1/common.pb.h"

namespace ptxbench::agent_gateway {

struct SessionOutput {
  std::string events;
  int64_t events_dropped = 0;
  std::string stderr_text;
  int64_t stderr_dropped = 0;
};

// `workspace_first`: names at the top of the workspace recorded before
// anything else (the kernel file), so no number of other files can crowd
// them out.
std::vector<ptxbench::v1::AgentRecord> SessionRecords(
    const SessionOutput& output, const std::vector<ModelProxy::Call>& calls,
    const std::string& home, const std::string& workspace,
    const std::vector<std::string>& workspace_first = {});

// The bounds of one walk. Whatever the tree holds, the walk looks at no
// more than max_entries directory entries (then only counts the rest of the
// directory it is reading), holds at most four descriptors open at once,
// and uses memory in proportion to max_entries and total_bytes.
struct TreeLimits {
  int max_depth = 16;             // levels of directories walked below the top
  int64_t max_entries = 10'000;   // directory entries looked at
  int64_t max_files = 1'000;      // files recorded
  size_t file_bytes = 256 << 10;  // of one file
  size_t total_bytes = 1 << 20;   // of all, record names included
  absl::Duration time = absl::Seconds(5);
};

// One tree to record.
struct TreeRecord {
  std::string dir;
  std::string prefix;              // of each record's name: "workspace/"
  std::vector<std::string> first;  // names at its top, recorded first
  // The files wanted, by name (null: every regular file). Files it refuses
  // are not counted as dropped.
  bool (*keep)(absl::string_view name) = nullptr;
  TreeLimits limits;
};

// Appends the tree's files to `out`, each named `prefix` + its path below
// `dir` ('/'-separated, escaped when not UTF-8), and, when something was
// left out or escaped, a record named after the prefix ("workspace/" ->
// "workspace.notes") saying what, one line each:
//   dropped: 9000 files past the first 1000
//   escaped: workspace/bad\xffname.cu (its name is not UTF-8)
void RecordTree(const TreeRecord& tree, std::vector<ptxbench::v1::AgentRecord>* out);

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_AGENT_SESSION_RECORD_H_
