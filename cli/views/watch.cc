#include "cli/views/watch.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <deque>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "cli/terminal/format.h"
#include "cli/terminal/interrupt.h"
#include "cli/views/views.h"

namespace ptxbench::cli {
namespace {

constexpr size_t kRecentEvents = 8;
constexpr size_t kRecentNotes = 5;

std::string EventLine(const v1::Event& e) {
  std::string line = absl::StrCat(
      absl::FormatTime("%H:%M:%S", absl::FromUnixMillis(e.unix_ms()), absl::LocalTimeZone()), "  ",
      e.trajectory_id().empty() ? "-" : e.trajectory_id());
  if (e.turn() > 0) absl::StrAppend(&line, "  turn ", e.turn());
  absl::StrAppend(&line, "  ", e.kind());
  if (!e.detail().empty()) absl::StrAppend(&line, "  ", e.detail());
  return line;
}

// Draws the updates of one watch; remembers what the terminal shows.
class WatchView {
 public:
  WatchView(v1::GetExperimentResponse experiment, const WatchOptions& options, std::ostream& out)
      : experiment_(std::move(experiment)), options_(options), out_(out) {}

  void Update(const v1::WatchExperimentResponse& update) {
    *experiment_.mutable_progress() = update.progress();
    std::vector<std::string> notes;
    if (options_.poll_notes) notes = options_.poll_notes();
    if (options_.json) {
      nlohmann::json line = ExperimentJson(experiment_);
      line["finished"] = update.finished();
      nlohmann::json events = nlohmann::json::array();
      for (const v1::Event& e : update.events()) {
        events.push_back({{"event_id", e.event_id()},
                          {"unix_ms", e.unix_ms()},
                          {"trajectory", e.trajectory_id()},
                          {"turn", e.turn()},
                          {"kind", e.kind()},
                          {"detail", e.detail()}});
      }
      line["events"] = std::move(events);
      if (!notes.empty()) line["notes"] = notes;
      out_ << line.dump() << "\n" << std::flush;
      return;
    }
    if (!options_.terminal) {
      for (const std::string& note : notes) out_ << "note: " << note << "\n";
      out_ << ProgressLine(experiment_.experiment().experiment_id(), update.progress(),
                           update.finished())
           << "\n"
           << std::flush;
      return;
    }
    for (const v1::Event& e : update.events()) {
      events_.push_back(EventLine(e));
      if (events_.size() > kRecentEvents) events_.pop_front();
    }
    for (std::string& note : notes) {
      notes_.push_back(std::move(note));
      if (notes_.size() > kRecentNotes) notes_.pop_front();
    }
    Redraw(update.finished() ? "finished" : "watching; Ctrl-C to stop");
  }

  // Leaves the terminal on a fresh line after an interrupt.
  void Interrupted() {
    if (options_.terminal && !options_.json) Redraw("stopped watching (the experiment goes on)");
  }

 private:
  void Redraw(absl::string_view footer) {
    std::string frame = ExperimentText(experiment_);
    if (!events_.empty()) {
      absl::StrAppend(&frame, "recent events\n");
      for (const std::string& e : events_) absl::StrAppend(&frame, "  ", e, "\n");
    }
    for (const std::string& note : notes_) absl::StrAppend(&frame, "! ", note, "\n");
    absl::StrAppend(&frame, "(", footer, ")\n");

    std::string text;
    if (lines_drawn_ > 0) absl::StrAppend(&text, "\x1b[", lines_drawn_, "F");  // up, column 1
    absl::StrAppend(&text, "\x1b[J");  // clear to the end of the screen
    lines_drawn_ = 0;
    for (absl::string_view line : absl::StrSplit(frame, '\n', absl::SkipEmpty())) {
      absl::StrAppend(&text,
                      options_.terminal_columns > 1 ? OneLine(line, options_.terminal_columns - 1)
                                                    : std::string(line),
                      "\n");
      ++lines_drawn_;
    }
    out_ << text << std::flush;
  }

  v1::GetExperimentResponse experiment_;
  const WatchOptions& options_;
  std::ostream& out_;
  std::deque<std::string> events_;
  std::deque<std::string> notes_;
  int lines_drawn_ = 0;
};

}  // namespace

int TerminalColumns() {
  struct winsize size = {};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) != 0) return 0;
  return size.ws_col;
}

absl::StatusOr<WatchEnd> FollowExperiment(SchedulerClient& client, const std::string& experiment_id,
                                          const WatchOptions& options, std::ostream& out) {
  InstallInterruptHandlers();
  absl::StatusOr<v1::GetExperimentResponse> experiment = client.GetExperiment(experiment_id);
  if (!experiment.ok()) return experiment.status();

  WatchView view(*std::move(experiment), options, out);
  v1::WatchExperimentRequest request;
  request.set_experiment_id(experiment_id);
  absl::Status status = client.WatchExperiment(
      request,
      [&](const v1::WatchExperimentResponse& update) {
        view.Update(update);
        return !update.finished();
      },
      [] { return Interrupted(); });
  if (status.ok()) return WatchEnd::kFinished;
  if (absl::IsCancelled(status) && Interrupted()) {
    view.Interrupted();
    return WatchEnd::kInterrupted;
  }
  return status;
}

}  // namespace ptxbench::cli
