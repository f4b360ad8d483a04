// Dispatcher::Submit: an experiment written in parts (dispatcher.h).
#include <algorithm>
#include <utility>

#include "common/log.h"
#include "scheduler/state/dispatcher.h"

namespace ptxbench::scheduler {

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
        const size_t part = static_cast<size_t>(std::max(1, options_.submit_part));
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
        *gone = core_.AbandonSubmitPart(s->staged, 2 * std::max(1, options_.submit_part));
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

}  // namespace ptxbench::scheduler
