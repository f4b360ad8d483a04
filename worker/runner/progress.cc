#include "worker/runner/progress.h"

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

void StartStuckReporter() {
  // Detached: it only reads process-lifetime state.
  std::thread([] {
    uint64_t last = g_steps.load();
    while (true) {
      absl::SleepFor(absl::Seconds(10));
      const uint64_t now = g_steps.load();
      if (now == last) Progress(absl::StrCat("no progress for 10 s at: ", g_where.load()));
      last = now;
    }
  }).detach();
}

}  // namespace ptxbench::runner
