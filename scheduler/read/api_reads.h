#ifndef PTXBENCH_SCHEDULER_READ_API_READS_H_
#define PTXBENCH_SCHEDULER_READ_API_READS_H_

// Reading rows back into their API messages, on any connection: the
// Reader's (status, show) and a Snapshot's (report, export). Internal to the
// scheduler. The caller holds the read transaction.

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "ptxbench/v1/client.pb.h"
#include "storage/database.h"

namespace ptxbench::scheduler {

// An experiment row: its rowid and its message.
struct StoredExperiment {
  int64_t rowid = 0;
  ptxbench::v1::Experiment experiment;
  double cost_usd = 0;
};
// By id or name; NOT_FOUND "unknown experiment 'x'".
absl::StatusOr<StoredExperiment> ReadExperiment(storage::Database& db, const std::string& id_or_name);

// The columns ReadSummary reads, then the trajectory's rowid (16), system
// and task prompt blobs (17, 18) and workloads (19); append "WHERE ...".
extern const char kTrajectorySummarySelect[];
ptxbench::v1::TrajectorySummary ReadSummary(const storage::Statement& s);

// Reads the trajectory at the current row of a kTrajectorySummarySelect
// statement into `out`: its summary, its agent session's outcome, and its
// prompts when `detail` is FULL. The session's records carry their contents
// when `detail` is FULL, all of them, or only the one named `only_record`
// when it is given ("" for none). The statement may be stepped on afterwards.
absl::Status ReadTrajectoryHead(storage::Database& db, const storage::Statement& s,
                                ptxbench::v1::TurnDetail detail, ptxbench::v1::Trajectory* out,
                                const std::string* only_record = nullptr);

// Reads the turns of the trajectory at `rowid`, in order, filled as
// `detail` says (ptxbench.v1.TurnDetail): each into the message `add`
// returns (so a caller can build them where they will be sent, e.g. on an
// arena), then `done` is called with it.
absl::Status ReadTurns(storage::Database& db, int64_t rowid, ptxbench::v1::TurnDetail detail,
                       const std::function<ptxbench::v1::Turn*()>& add,
                       const std::function<absl::Status(ptxbench::v1::Turn&)>& done);

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_READ_API_READS_H_
