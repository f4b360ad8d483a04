#ifndef PTXBENCH_SCHEDULER_READ_READER_H_
#define PTXBENCH_SCHEDULER_READ_READER_H_

// Room scheduler/read/: the read path, on connections of its own. Owns the
// queries of status, list, show and watch (this header), snapshots for long
// reads (snapshot.h), the report's query (report_query.h). May include:
// spec/, store/.
//
// Read-only queries behind the client API (status, list, show, watch). They
// run on their own connection, so they see only committed state and never
// wait for the writer thread. Thread-safe (one connection behind a mutex).

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "ptxbench/v1/client.pb.h"
#include "scheduler/read/snapshot.h"
#include "storage/database.h"

namespace ptxbench::scheduler {

class Reader {
 public:
  explicit Reader(std::unique_ptr<storage::Database> db)
      : path_(db->path()), db_(std::move(db)) {}

  // A consistent view for a long read, on its own connection (snapshot.h).
  absl::StatusOr<std::unique_ptr<Snapshot>> OpenSnapshot() const { return Snapshot::Open(path_); }

  absl::StatusOr<ptxbench::v1::GetExperimentResponse> GetExperiment(const std::string& id);
  absl::StatusOr<ptxbench::v1::ListExperimentsResponse> ListExperiments();
  absl::StatusOr<ptxbench::v1::ListTrajectoriesResponse> ListTrajectories(
      const ptxbench::v1::ListTrajectoriesRequest& request);
  // Its agent session's records without their contents, but the one named
  // `agent_record` (GetTrajectoryRequest.agent_record).
  absl::StatusOr<ptxbench::v1::Trajectory> GetTrajectory(const std::string& id,
                                                         const std::string& agent_record = "");
  // Events of the experiment after `after_id`, at most `limit`.
  absl::StatusOr<std::vector<ptxbench::v1::Event>> Events(const std::string& experiment_id,
                                                          int64_t after_id, int limit);
  absl::StatusOr<int64_t> LastEventId(const std::string& experiment_id);
  // Every trajectory counted by state (ptxbench.v1.TrajectoryState name), for
  // /metrics: one scan of the (experiment, state) index.
  absl::StatusOr<std::map<std::string, int64_t>> TrajectoriesByState();

 private:
  absl::StatusOr<ptxbench::v1::GetExperimentResponse> ExperimentLocked(const std::string& id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ProgressLocked(int64_t rowid, ptxbench::v1::ExperimentProgress* progress)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string path_;
  absl::Mutex mu_;
  std::unique_ptr<storage::Database> db_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_READ_READER_H_
