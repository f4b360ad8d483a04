#ifndef PTXBENCH_SCHEDULER_READ_SNAPSHOT_H_
#define PTXBENCH_SCHEDULER_READ_SNAPSHOT_H_

// A consistent read-only view of the scheduler database for long reads
// (reports, exports): its own connection, and one read transaction for its
// whole life. In WAL mode the writer neither waits for it nor is waited on,
// and everything read through it belongs to one moment, however long the
// read takes. Not thread-safe; one Snapshot per call.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ptxbench/v1/client.pb.h"
#include "results/report/facts.h"
#include "scheduler/read/api_reads.h"
#include "storage/database.h"

namespace ptxbench::scheduler {

class Snapshot {
 public:
  // Opens `path` read-only and pins the snapshot.
  static absl::StatusOr<std::unique_ptr<Snapshot>> Open(const std::string& path);
  ~Snapshot();

  absl::StatusOr<StoredExperiment> Experiment(const std::string& id_or_name);

  // The definitions the experiment's trajectories use, sorted.
  absl::StatusOr<std::vector<std::string>> Definitions(int64_t experiment_rowid);

  // Where ReadTrajectories puts what it reads: the caller allocates each
  // part (so it can build it where it will be sent, e.g. on an arena).
  class PartWriter {
   public:
    virtual ~PartWriter() = default;
    // A new, empty part to fill.
    virtual ptxbench::v1::Trajectory* NewPart() = 0;
    // The part NewPart returned last is complete; it serializes to `bytes`.
    virtual absl::Status PartDone(size_t bytes) = 0;
  };

  // The trajectories of `request`'s target, in creation order, as parts of
  // about `part_bytes` at most (one turn may be larger): a trajectory whose
  // turns do not fit continues in the next part (Trajectory.continued).
  absl::Status ReadTrajectories(const ptxbench::v1::ReadTrajectoriesRequest& request,
                                size_t part_bytes, PartWriter& out);

  // What a report reads of a definition: its tags (the categories) and its
  // importance (the weight of its trajectories in the scores).
  struct DefinitionFacts {
    std::vector<std::string> categories;
    double importance = 1;
  };

  // The report facts of every trajectory of the experiment at `rowid`, in
  // creation order. `definition` gives a definition's facts by name.
  absl::Status ForEachFacts(
      int64_t experiment_rowid,
      const std::function<DefinitionFacts(const std::string& definition)>& definition,
      const std::function<void(const report::TrajectoryFacts&)>& fn);

 private:
  explicit Snapshot(std::unique_ptr<storage::Database> db) : db_(std::move(db)) {}
  absl::Status TurnFacts(int64_t trajectory_rowid, std::vector<report::TurnFacts>* out);

  std::unique_ptr<storage::Database> db_;
};

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_READ_SNAPSHOT_H_
