// results_db: writes a scheduler database holding one finished experiment of
// synthetic results, for the report and export benchmarks (bench/results_bench.sh)
// and for scheduler_bench's background load.
//
//   results_db --out FILE [--trajectories 100000] [--turns 10] [--workloads 4]
//
// The rows are written through the scheduler's own row stores, as Core
// would write them: answers, kernels, evaluations with per-workload traces,
// feedback, all as blobs. Outcomes are drawn from a fixed seed: about a third
// of the turns pass, with speedups spread over 0.2x..4x. Answers and results
// repeat from a pool of distinct texts (as a real experiment's compile logs
// and feedback partly do), so the file stays a few hundred megabytes.
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/hash.h"
#include "common/status_macros.h"
#include "experiment_spec/spec.h"
#include "scheduler/store/experiment_store.h"
#include "scheduler/store/schema.h"
#include "scheduler/store/trajectory_store.h"
#include "scheduler/store/turn_store.h"
#include "storage/blob_store.h"
#include "verdict/verdict.h"

ABSL_FLAG(std::string, out, "", "database file to create (must not exist)");
ABSL_FLAG(int, trajectories, 100000, "trajectories of the experiment");
ABSL_FLAG(int, turns, 10, "turns of each trajectory");
ABSL_FLAG(int, workloads, 4, "workload traces per evaluation");
ABSL_FLAG(std::string, name, "bench-results", "experiment name");

namespace ptxbench::bench {
namespace {

namespace v1 = ::ptxbench::v1;
using experiment_spec::ExpandedExperiment;
using experiment_spec::TrajectorySpec;

constexpr int kPool = 2000;  // distinct answers and evaluation results

v1::EvalResult MakeResult(std::mt19937_64& rng, int workloads, v1::EvalStatus status) {
  std::uniform_real_distribution<double> speedup(0.2, 4.0);
  v1::EvalResult r;
  r.set_status(status);
  r.set_all_passed(status == v1::PASSED);
  r.set_compile_log(absl::StrCat("ptxas info    : Used ", rng() % 200, " registers, ",
                                 rng() % 49152, " bytes smem"));
  r.set_wall_time_ms(static_cast<int64_t>(1000 + rng() % 9000));
  r.set_worker_id("wk_bench");
  r.set_gpu_model("NVIDIA H200");
  double min = 1e9;
  for (int w = 0; w < workloads; ++w) {
    v1::WorkloadTrace* t = r.add_traces();
    t->set_workload_uuid(absl::StrCat("w", w));
    (*t->mutable_axes())["M"] = 1024 << w;
    t->set_status(status);
    if (status == v1::PASSED) {
      t->set_latency_ms(0.1 + (rng() % 1000) / 1000.0);
      t->set_speedup(speedup(rng));
      t->set_reference_latency_ms(t->latency_ms() * t->speedup());
      t->set_roofline_fraction((rng() % 100) / 100.0);
      t->set_reference("cuBLAS");
      min = std::min(min, t->speedup());
    } else {
      t->add_errors("max_abs_error=0.5 above atol");
    }
  }
  r.set_min_speedup(status == v1::PASSED ? min : 0);
  return r;
}

absl::Status Run() {
  const std::string path = absl::GetFlag(FLAGS_out);
  if (path.empty()) return absl::InvalidArgumentError("--out FILE is required");
  const int n = absl::GetFlag(FLAGS_trajectories), turns = absl::GetFlag(FLAGS_turns);
  PTXB_ASSIGN_OR_RETURN(auto db, scheduler::OpenSchedulerDatabase(path));
  PTXB_RETURN_IF_ERROR(db->Execute("PRAGMA synchronous = OFF; BEGIN"));
  const int64_t now = absl::ToUnixMillis(absl::Now());
  ExpandedExperiment x;
  x.name = absl::GetFlag(FLAGS_name);
  x.experiment_id = experiment_spec::DeriveExperimentId(x.name);
  x.normalized_json = absl::StrCat(R"({"definitions":["gemm_n7168_k5120"],"name":")", x.name,
                                   R"(","num_turns":)", turns, "}");
  x.spec_hash = Sha256Hex(x.normalized_json);
  scheduler::ExperimentStore experiments(db.get());
  PTXB_ASSIGN_OR_RETURN(int64_t experiment, experiments.Insert(x, turns, now));

  std::mt19937_64 rng(42);
  std::vector<std::string> answers, kernels, passed, failed, feedback;
  for (int i = 0; i < kPool; ++i) {
    const std::string kernel = absl::StrCat("__global__ void k", i, "() {}\n// ", std::string(2000, 'x'));
    PTXB_ASSIGN_OR_RETURN(kernels.emplace_back(), storage::PutBlob(*db, kernel));
    PTXB_ASSIGN_OR_RETURN(answers.emplace_back(),
                          storage::PutBlob(*db, absl::StrCat("Here it is.\n```cpp\n", kernel, "```\n")));
    PTXB_ASSIGN_OR_RETURN(
        passed.emplace_back(),
        storage::PutBlob(*db, MakeResult(rng, absl::GetFlag(FLAGS_workloads), v1::PASSED)
                                  .SerializeAsString()));
    PTXB_ASSIGN_OR_RETURN(
        failed.emplace_back(),
        storage::PutBlob(*db, MakeResult(rng, absl::GetFlag(FLAGS_workloads),
                                         v1::INCORRECT_NUMERICAL)
                                  .SerializeAsString()));
    PTXB_ASSIGN_OR_RETURN(feedback.emplace_back(),
                          storage::PutBlob(*db, absl::StrCat("Evaluation results #", i)));
  }
  PTXB_ASSIGN_OR_RETURN(std::string system, storage::PutBlob(*db, "SYSTEM PROMPT"));
  PTXB_ASSIGN_OR_RETURN(std::string task, storage::PutBlob(*db, "TASK PROMPT"));

  scheduler::TrajectoryStore trajectory_rows(db.get());
  scheduler::TurnStore turn_rows(db.get());
  const std::vector<std::string> models = {"gpt-4.1", "claude-sonnet-4", "gemini-2.5-pro",
                                           "qwen3-coder"};
  const std::vector<std::string> tags = {"ptxb-no-hint", "ptxb-hint"};
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * finish,
      db->Cached("UPDATE trajectories SET state = ?, turns_completed = ?, correct = ?, "
                 "best_speedup = ? WHERE rowid = ?"));
  for (int i = 0; i < n; ++i) {
    TrajectorySpec t;
    t.model = models[i % models.size()];
    t.prompt_tag = tags[(i / models.size()) % tags.size()];
    t.definition = "gemm_n7168_k5120";
    t.sample_index = i;
    t.num_turns = turns;
    t.target_speedup = 1e9;  // never met: every trajectory runs all its turns
    t.trajectory_id = experiment_spec::DeriveTrajectoryId(x.experiment_id, t.model, t.definition,
                                                          t.prompt_tag, i);
    PTXB_ASSIGN_OR_RETURN(int64_t rowid,
                          trajectory_rows.Insert(t, experiment, system, task, v1::AWAITING_MODEL, now));
    bool correct = false;
    double best = 0;
    for (int turn = 0; turn < turns; ++turn) {
      const size_t k = rng() % kPool;
      v1::LlmResponse meta;
      meta.set_provider("openai");
      meta.set_finish_reason("stop");
      meta.mutable_usage()->set_input_tokens(static_cast<int64_t>(2000 + 1000 * turn));
      meta.mutable_usage()->set_output_tokens(static_cast<int64_t>(500 + rng() % 3000));
      meta.set_cost_usd(0.001 * (1 + rng() % 20));
      meta.set_latency_ms(static_cast<int64_t>(2000 + rng() % 60000));
      scheduler::AnswerRow answer;
      answer.trajectory = rowid;
      answer.turn = turn;
      answer.answer_blob = answers[k];
      answer.llm_meta = meta.SerializeAsString();
      answer.kernel_blob = kernels[k];
      answer.kernel_sha256 = kernels[k];
      answer.started_ms = now;
      PTXB_RETURN_IF_ERROR(turn_rows.InsertAnswer(answer));
      const bool pass = rng() % 3 == 0;
      PTXB_ASSIGN_OR_RETURN(std::string bytes,
                            storage::GetBlob(*db, pass ? passed[k] : failed[k]));
      v1::EvalResult result;
      result.ParseFromString(bytes);
      scheduler::EvalRow row;
      row.eval_blob = pass ? passed[k] : failed[k];
      row.status = result.status();
      row.correct = verdict::Correct(result);
      if (pass) {
        row.min_speedup = result.min_speedup();
        row.kernel_speedup = verdict::KernelSpeedup(result);
        row.roofline = verdict::RooflineFraction(result);
        correct = true;
        best = std::max(best, result.min_speedup());
      }
      row.fallback_correct = verdict::FallbackCorrect(result);
      row.eval_ms = result.wall_time_ms();
      row.feedback_blob = feedback[k];
      row.finished_ms = now;
      PTXB_RETURN_IF_ERROR(turn_rows.RecordEval(rowid, turn, row));
    }
    finish->BindInt64(1, v1::LIMITS_EXCEEDED)
        .BindInt64(2, turns)
        .BindBool(3, correct)
        .BindDouble(4, best)
        .BindInt64(5, rowid);
    PTXB_RETURN_IF_ERROR(finish->Run());
    if ((i + 1) % 10000 == 0) std::fprintf(stderr, "%d trajectories\n", i + 1);
  }
  // Written whole: shown, as Dispatcher::Submit shows an experiment after its
  // last part (a staged one is hidden from readers, and a scheduler started
  // on the file would delete it).
  PTXB_RETURN_IF_ERROR(experiments.Show(experiment));
  PTXB_RETURN_IF_ERROR(db->Execute("COMMIT"));
  std::printf("%s: experiment %s, %d trajectories x %d turns\n", path.c_str(), x.name.c_str(), n,
              turns);
  return absl::OkStatus();
}

}  // namespace
}  // namespace ptxbench::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::Status status = ptxbench::bench::Run();
  if (!status.ok()) {
    std::fprintf(stderr, "results_db: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
