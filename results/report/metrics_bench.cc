// The cost of a report's metrics: ReportBuilder::Add and Finish over 100,000
// trajectories of 10 turns (20 models, 5 tags, a mix of outcomes), grouped
// by [model], [tag] and [model, tag] -- the size `ptxbench report` must
// handle well under a second.
// Run: report_metrics_bench [--benchmark_min_time=1]

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "results/report/metrics.h"

namespace ptxbench::report {
namespace {

constexpr int kTrajectories = 100'000;
constexpr int kTurns = 10;

std::vector<TrajectoryFacts> MakeTrajectories() {
  static constexpr v1::EvalStatus kStatuses[] = {
      v1::PASSED, v1::COMPILE_ERROR, v1::INCORRECT_NUMERICAL, v1::RUNTIME_ERROR, v1::TIMEOUT};
  std::vector<TrajectoryFacts> trajectories(kTrajectories);
  for (int i = 0; i < kTrajectories; ++i) {
    TrajectoryFacts& trajectory = trajectories[i];
    trajectory.model = "model-" + std::to_string(i % 20);
    trajectory.tag = "tag-" + std::to_string(i % 5);
    trajectory.definition = "definition-" + std::to_string(i % 50);
    trajectory.state = v1::LIMITS_EXCEEDED;
    trajectory.num_turns = kTurns;
    trajectory.turns.resize(kTurns);
    for (int t = 0; t < kTurns; ++t) {
      TurnFacts& turn = trajectory.turns[t];
      turn.turn = t;
      turn.answered = true;
      turn.has_kernel = (i + t) % 7 != 0;
      turn.evaluated = turn.has_kernel;
      turn.status = kStatuses[(i * 3 + t) % 5];
      turn.correct = turn.status == v1::PASSED;
      turn.speedup = turn.correct ? 0.1 + (i + t) % 40 * 0.1 : 0;
      turn.eval_ms = 1000 + (i * 7 + t) % 5000;
      turn.model_latency_ms = 2000 + (i * 13 + t) % 30000;
      turn.usage.set_input_tokens(3000);
      turn.usage.set_output_tokens(800);
      turn.cost_usd = 0.01;
    }
  }
  return trajectories;
}

void BM_ReportOf100kTrajectories(benchmark::State& state) {
  const std::vector<TrajectoryFacts> trajectories = MakeTrajectories();
  double add_seconds = 0;
  for (auto _ : state) {
    absl::StatusOr<ReportBuilder> builder =
        ReportBuilder::Create({{"model"}, {"tag"}, {"model", "tag"}});
    if (!builder.ok()) {
      std::fprintf(stderr, "%s\n", builder.status().ToString().c_str());
      std::abort();
    }
    const auto start = std::chrono::steady_clock::now();
    for (const TrajectoryFacts& trajectory : trajectories) builder->Add(trajectory);
    add_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    benchmark::DoNotOptimize(builder->Finish());
  }
  // The share of Add in the time per iteration (the rest is Finish).
  state.counters["add_ms"] = benchmark::Counter(add_seconds * 1e3 / state.iterations());
  state.SetItemsProcessed(state.iterations() * kTrajectories);
}
BENCHMARK(BM_ReportOf100kTrajectories)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ptxbench::report

BENCHMARK_MAIN();
