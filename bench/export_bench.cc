// The csv and jsonl exports over synthetic trajectories: how fast rows are
// written and how much memory that takes. What the export of a
// million-turn experiment needs (at least 100,000 rows a second, under
// 300 MB) without the scheduler and the stream in the way.
//
//   export_bench --trajectories 100000 --turns 10 --workloads 3 --format csv
//
// Prints turns, workload rows, seconds, turn rows/s, all rows/s, peak RSS.

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "results/exports/export.h"

ABSL_FLAG(int, trajectories, 100000, "trajectories to export");
ABSL_FLAG(int, turns, 10, "turns per trajectory");
ABSL_FLAG(int, workloads, 3, "workload results per evaluated turn");
ABSL_FLAG(std::string, format, "csv", "csv or jsonl");
ABSL_FLAG(std::string, out, "", "output folder (default: a fresh one under /tmp, removed after)");

namespace v1 = ::ptxbench::v1;

namespace {

// A trajectory as a RESULTS stream carries it: numbers, ids and statuses,
// no texts. Every third turn fails to compile; the rest are timed.
v1::Trajectory Synthetic(int index, int turns, int workloads) {
  v1::Trajectory t;
  v1::TrajectorySummary& s = *t.mutable_summary();
  s.set_trajectory_id(absl::StrCat("tr_", 10000000 + index, "abcdef0123456789"));
  s.set_experiment_id("exp_0123456789abcdef");
  s.set_model(index % 2 ? "gpt-4.1" : "claude-sonnet-4");
  s.set_definition("gemm_n7168_k5120");
  s.set_prompt_tag("ptxb-basic");
  s.set_sample_index(index);
  s.set_num_turns(turns);
  s.set_target_speedup(1.5);
  s.set_state(v1::LIMITS_EXCEEDED);
  for (int i = 0; i < turns; ++i) {
    v1::Turn& turn = *t.add_turns();
    turn.set_index(i);
    turn.set_state("done");
    turn.set_started_unix_ms(1767225600000 + index * 1000 + i * 37);
    turn.set_finished_unix_ms(turn.started_unix_ms() + 20000 + i);
    turn.set_kernel_sha256("3605c61bc26cc1dbdf6dc570b025088667eddbd3263b437c925f3771157b5cf3");
    v1::LlmResponse& r = *turn.mutable_response();
    r.mutable_usage()->set_input_tokens(12000 + i * 900);
    r.mutable_usage()->set_output_tokens(3000 + index % 1000);
    r.mutable_usage()->set_reasoning_tokens(1500);
    r.mutable_usage()->set_cached_tokens(8000);
    r.set_cost_usd(0.0123 + i * 0.001);
    r.set_provider("openai");
    r.set_latency_ms(15000 + i);
    v1::EvalResult& e = *turn.mutable_eval();
    e.set_wall_time_ms(9000 + i);
    e.set_gpu_model("NVIDIA H200");
    if (i % 3 == 0) {
      e.set_status(v1::COMPILE_ERROR);
      continue;
    }
    e.set_status(v1::PASSED);
    e.set_all_passed(true);
    e.set_min_speedup(1.1 + i * 0.01);
    for (int w = 0; w < workloads; ++w) {
      v1::WorkloadTrace& trace = *e.add_traces();
      trace.set_workload_uuid(absl::StrCat("729b8d2e-8307-57e0-b6f5-d5095734", 1000 + w));
      (*trace.mutable_axes())["M"] = 64 << w;
      (*trace.mutable_axes())["N"] = 7168;
      (*trace.mutable_axes())["K"] = 5120;
      trace.set_status(v1::PASSED);
      trace.set_latency_ms(0.123456 + w);
      trace.set_reference_latency_ms(0.2 + w);
      trace.set_speedup(trace.reference_latency_ms() / trace.latency_ms());
      trace.set_max_abs_error(0.0078125);
      trace.set_max_rel_error(0.00390625);
      trace.set_matched_ratio(1);
      trace.set_reference("cuBLAS");
    }
  }
  return t;
}

int64_t PeakRssMiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const int trajectories = absl::GetFlag(FLAGS_trajectories);
  const int turns = absl::GetFlag(FLAGS_turns);
  const int workloads = absl::GetFlag(FLAGS_workloads);
  auto format = ptxbench::exports::ParseFormat(absl::GetFlag(FLAGS_format));
  if (!format.ok()) {
    std::fprintf(stderr, "%s\n", std::string(format.status().message()).c_str());
    return 2;
  }
  std::string out = absl::GetFlag(FLAGS_out);
  const bool temporary = out.empty();
  if (temporary) out = absl::StrCat("/tmp/ptxb_export_bench_", getpid());

  v1::Experiment experiment;
  experiment.set_experiment_id("exp_0123456789abcdef");
  experiment.set_name("bench");
  auto writer = ptxbench::exports::MakeWriter(*format, out, {});
  if (!writer.ok()) {
    std::fprintf(stderr, "%s\n", std::string(writer.status().message()).c_str());
    return 1;
  }
  int64_t turn_rows = 0, workload_rows = 0;
  double seconds = 0;
  absl::Status status = (*writer)->BeginExperiment(experiment, {});
  for (int i = 0; i < trajectories && status.ok(); ++i) {
    // Made outside the timed part: the stream hands the writer ready protos.
    const v1::Trajectory t = Synthetic(i, turns, workloads);
    for (const v1::Turn& turn : t.turns()) workload_rows += turn.eval().traces_size();
    turn_rows += t.turns_size();
    const auto start = std::chrono::steady_clock::now();
    status = (*writer)->Add(t);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  const auto start = std::chrono::steady_clock::now();
  if (status.ok()) status = (*writer)->EndExperiment();
  if (status.ok()) status = (*writer)->Finish();
  seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", std::string(status.message()).c_str());
    return 1;
  }
  std::printf("format %s: %lld turns, %lld workload rows in %.2f s: %.0f turn rows/s, "
              "%.0f rows/s in all; peak RSS %lld MiB\n",
              absl::GetFlag(FLAGS_format).c_str(), static_cast<long long>(turn_rows),
              static_cast<long long>(workload_rows), seconds, turn_rows / seconds,
              (turn_rows + workload_rows) / seconds, static_cast<long long>(PeakRssMiB()));
  if (temporary) std::filesystem::remove_all(out);
  return 0;
}
