// Dispatcher::Submit and RunInParts: big writes in parts (dispatcher.h).
#include <algorithm>
#include <optional>
#include <utility>

#include "common/log.h"
#include "scheduler/state/dispatcher.h"

namespace ptxbench::scheduler {

using experiment_spec::ExpandedExperiment;
using experiment_spec::RenderedPrompts;

// What the chain of a submission's ops shares. Touched only by those ops,
// one at a time on the writer thread, and by the last one's Done.
struct Dispatcher::Submission {
  std::shared_ptr<const ExpandedExperiment> experiment;
  std::shared_ptr<const RenderedPrompts> prompts;
  Callback<SubmitOutcome> done;
  StagedSubmit staged;
};

void Dispatcher::Submit(std::shared_ptr<const ExpandedExperiment> experiment,
                        std::shared_ptr<const RenderedPrompts> prompts,
                        Callback<SubmitOutcome> done) {
  auto s = std::make_shared<Submission>();
  s->experiment = std::move(experiment);
  s->prompts = std::move(prompts);
  s->done = std::move(done);
  auto failed = std::make_shared<absl::Status>();
  // Begin is an ordinary op: small (the experiment's row and its prompts).
  queue_.Post(
      [this, s, failed](storage::Database&) -> absl::Status {
        absl::StatusOr<StagedSubmit> staged = core_.BeginSubmit(*s->experiment, *s->prompts);
        if (!staged.ok()) return *failed = staged.status();
        s->staged = *std::move(staged);
        // Posted from the op: it runs in a later batch, after this one committed.
        if (s->staged.outcome.created) PostSubmitPart(s);
        return absl::OkStatus();
      },
      [s, failed](absl::Status) {
        if (!failed->ok()) {
          s->done(*failed);
        } else if (!s->staged.outcome.created) {
          s->done(s->staged.outcome);
        }
      });
}

void Dispatcher::PostSubmitPart(std::shared_ptr<Submission> s) {
  queue_.PostSolo(
      [this, s](storage::Database&) -> absl::Status {
        const size_t part = static_cast<size_t>(std::max(1, options_.write_part));
        // Rolled back whole when it fails (a solo op); `staged` is unchanged then.
        absl::Status written = core_.SubmitPart(*s->experiment, part, s->staged);
        if (!written.ok()) {
          PostSubmitAbandon(s, written);
        } else if (s->staged.written < s->experiment->trajectories.size()) {
          PostSubmitPart(s);
        } else {
          PostSubmitFinish(s);
        }
        return written;
      },
      nullptr);
}

void Dispatcher::PostSubmitFinish(std::shared_ptr<Submission> s) {
  auto finished = std::make_shared<absl::Status>();
  queue_.Post(
      [this, s, finished](storage::Database&) -> absl::Status {
        *finished = core_.FinishSubmit(*s->experiment, s->staged);
        if (!finished->ok()) PostSubmitAbandon(s, *finished);
        return *finished;
      },
      [s, finished](absl::Status) {
        if (finished->ok()) s->done(s->staged.outcome);
      });
}

void Dispatcher::PostSubmitAbandon(std::shared_ptr<Submission> s, absl::Status why) {
  auto gone = std::make_shared<absl::StatusOr<bool>>(false);
  queue_.PostSolo(
      [this, s, why, gone](storage::Database&) -> absl::Status {
        // Rows, not trajectories: a trajectory and its task are two.
        *gone = core_.AbandonSubmitPart(s->staged, 2 * std::max(1, options_.write_part));
        if (gone->ok() && !**gone) PostSubmitAbandon(s, why);
        return gone->status();
      },
      [s, why, gone](absl::Status) {
        if (!gone->ok()) {
          // A restart deletes what is left (Core::Load).
          LogError("could not delete a failed submission's rows",
                   {{"experiment", s->experiment->experiment_id},
                    {"error", gone->status().ToString()}});
          s->done(why);
        } else if (**gone) {
          LogWarning("a submission failed; what it wrote is deleted",
                     {{"experiment", s->experiment->experiment_id}, {"error", why.ToString()}});
          s->done(why);
        }
      });
}

void Dispatcher::RunInParts(std::function<absl::Status(Core&, int max, WritePart&)> part,
                            Callback<int64_t> done) {
  struct Chain {
    std::function<absl::Status(Core&, int, WritePart&)> part;
    Callback<int64_t> done;
    WritePart at;  // the writer thread's
    std::function<void()> post;
  };
  auto chain = std::make_shared<Chain>();
  chain->part = std::move(part);
  chain->done = std::move(done);
  // Each op holds the chain; the chain holds only a weak pointer to itself.
  chain->post = [this, chain_ptr = std::weak_ptr<Chain>(chain)] {
    std::shared_ptr<Chain> c = chain_ptr.lock();
    // This op's own end, for its Done: the reply thread runs a Done while the
    // writer may already run the next part.
    auto end = std::make_shared<std::optional<absl::StatusOr<int64_t>>>();
    queue_.PostSolo(
        [this, c, end](storage::Database&) -> absl::Status {
          absl::Status status = c->part(core_, std::max(1, options_.write_part), c->at);
          // Memory may have changed with the rows: as for Run.
          FatalIfBroken(status);
          if (!status.ok()) {
            *end = status;
          } else if (c->at.done) {
            *end = c->at.changed;
          } else {
            c->post();
          }
          return status;
        },
        [c, end](absl::Status) {
          if (end->has_value()) c->done(**end);
        });
  };
  chain->post();
}

}  // namespace ptxbench::scheduler
