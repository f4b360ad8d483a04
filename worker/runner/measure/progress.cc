#include "worker/runner/measure/progress.h"

#include <atomic>
#include <cstdint>
#include <iostream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

namespace ptxbench::runner {
namespace {

const absl::Time g_start = absl::Now();
std::atomic<const char*> g_where{"start"};
std::atomic<uint64_t> g_steps{0};

}  // namespace

double SecondsSinceStart() { return absl::ToDoubleSeconds(absl::Now() - g_start); }

void Progress(absl::string_view what) {
  std::cerr << absl::StrFormat("ptxbench-runner: [%.3f s] %s\n", SecondsSinceStart(), what)
            << std::flush;
}

void At(const char* where) {
  g_where.store(where);
  g_steps.fetch_add(1);
}

void StartStuckReporter(absl::Duration act_after, std::function<void()> act) {
  // Detached: it reads process-lifetime state, and `act` holds what it needs.
  std::thread([act_after, act = std::move(act)] {
    uint64_t last = g_steps.load();
    absl::Time since = absl::Now();
    bool acted = false;
    while (true) {
      absl::SleepFor(absl::Seconds(5));
      const uint64_t now = g_steps.load();
      if (now != last) {
        last = now;
        since = absl::Now();
        acted = false;
        continue;
      }
      const absl::Duration stuck = absl::Now() - since;
      Progress(absl::StrCat("no progress for ", absl::FormatDuration(stuck), " at: ", g_where.load()));
      if (!acted && stuck >= act_after) {
        acted = true;
        Progress("stuck: killing the candidate host");
        act();
      }
    }
  }).detach();
}

}  // namespace ptxbench::runner
