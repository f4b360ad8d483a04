#include "results/exports/testing/trajectories.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "common/hash.h"

namespace ptxbench::exports::testing {

namespace v1 = ::ptxbench::v1;

v1::Experiment Experiment(const std::string& language) {
  v1::Experiment e;
  e.set_experiment_id("exp_00112233aabbccdd");
  e.set_name("export-test");
  e.set_spec_json(absl::StrCat(
      R"({"context_policy":"full","definitions":["gemm_export_test"],"eval":"full",)",
      R"("form":"matrix","language":")", language,
      R"(","max_cost_usd":0,"models":["m/one"],"name":"export-test","num_turns":4,)",
      R"("priority":1,"prompt_tags":["ptxb-basic"],"samples":2,"target_speedup":1.5})"));
  e.set_created_unix_ms(1767225600000);
  e.set_priority(1);
  e.set_eval_mode(v1::FULL);
  e.set_language(language);
  e.add_architectures("sm_90");
  e.set_context_policy("full");
  e.set_num_turns(4);
  return e;
}

std::vector<v1::DefinitionDocument> Definitions() {
  v1::DefinitionDocument d;
  d.set_name(kDefinition);
  d.set_op_type(kOpType);
  d.set_json(absl::StrCat(R"({"name": ")", kDefinition, R"(", "op_type": "gemm", "tags": [],
 "description": "C = A B^T, for the export tests",
 "axes": {"M": {"type": "var"}, "N": {"type": "const", "value": 64},
          "K": {"type": "const", "value": 32}},
 "inputs": {"A": {"shape": ["M", "K"], "dtype": "bfloat16"},
            "B": {"shape": ["N", "K"], "dtype": "bfloat16"}},
 "outputs": {"C": {"shape": ["M", "N"], "dtype": "bfloat16"}},
 "reference": "import torch\ndef run(A, B):\n    return A @ B.T\n",
 "constraints": []}
)"));
  for (auto [uuid, m] : {std::pair{kWorkload1, 8}, std::pair{kWorkload2, 16}}) {
    d.add_workload_lines(absl::StrCat(R"({"definition": ")", kDefinition,
                                      R"(", "solution": null, "workload": {"uuid": ")", uuid,
                                      R"(", "axes": {"M": )", m,
                                      R"(}, "inputs": {"A": {"type": "random"}, "B": {"type": "random"}}}, "evaluation": null})"));
  }
  d.set_dataset("bundled");
  d.set_version(Sha256Hex(d.json()));
  return {d};
}

std::string KernelSource(int sample, int turn, const std::string& language) {
  if (language == "triton") {
    return absl::StrCat("# sample ", sample, " turn ", turn,
                        ", with \"quotes\"\nimport torch\nimport triton\n"
                        "import triton.language as tl\n\n@triton.jit\ndef k(a_ptr, c_ptr):\n"
                        "    pass\n\ndef run(A, B, C):\n    k[(1,)](A, C)\n");
  }
  if (language == "ptx") {
    return absl::StrCat("// sample ", sample, " turn ", turn,
                        "\n.version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k() { ret; }\n"
                        "// ptxbench-launch: {\"entry\": \"k\", \"grid\": [1, 1, 1], \"block\": [32, 1, 1]}\n");
  }
  const std::string cu = absl::StrCat(
      "// sample ", sample, " turn ", turn, ", with \"quotes\", commas, and a\ttab\n",
      "#include \"ptxbench/kernel_abi.h\"\n",
      "PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,\n"
      "                     cudaStream_t stream) {}\n");
  if (language != "solution") return cu;
  std::string content;
  for (char c : cu) {
    if (c == '"') {
      content += "\\\"";
    } else if (c == '\n') {
      content += "\\n";
    } else if (c == '\t') {
      content += "\\t";
    } else {
      content += c;
    }
  }
  return absl::StrCat(R"({"name": "own_solution_)", sample, "_", turn,
                      R"(", "definition": "gemm_export_test", "author": "m/one",
 "spec": {"language": "cuda", "target_hardware": ["cuda"], "entry_point": "kernel.cu::run",
          "dependencies": [], "destination_passing_style": true, "binding": null},
 "sources": [{"path": "kernel.cu", "content": ")",
                      content, R"("}]})");
}

namespace {

v1::WorkloadTrace Trace(const char* uuid, int m, v1::EvalStatus status, double speedup) {
  v1::WorkloadTrace t;
  t.set_workload_uuid(uuid);
  (*t.mutable_axes())["M"] = m;
  (*t.mutable_axes())["N"] = 64;
  (*t.mutable_axes())["K"] = 32;
  t.set_status(status);
  t.set_reference("cuBLAS");
  t.set_log(absl::StrCat("workload ", uuid, " log, line one\nline two, \"quoted\""));
  if (status == v1::PASSED) {
    t.set_latency_ms(0.5 / speedup);
    t.set_reference_latency_ms(0.5);
    t.set_speedup(speedup);
    t.set_max_abs_error(0.001);
    t.set_max_rel_error(0.002);
    t.set_matched_ratio(1.0);
    t.set_roofline_fraction(0.25);
  } else {
    t.set_max_abs_error(std::numeric_limits<double>::quiet_NaN());
    t.set_max_rel_error(std::numeric_limits<double>::infinity());
    t.set_matched_ratio(0.5);
    t.add_errors("C[0, 3]: expected 1.5, got nan");
    t.add_errors("C[1, 7]: expected 2, got 9 | off");
  }
  return t;
}

}  // namespace

v1::Trajectory Trajectory(int sample, v1::TrajectoryState state, const std::vector<TurnSpec>& turns,
                          const std::string& language) {
  v1::Trajectory t;
  v1::TrajectorySummary& s = *t.mutable_summary();
  s.set_trajectory_id(absl::StrCat("tr_test_", sample));
  s.set_experiment_id(Experiment().experiment_id());
  s.set_model("m/one");
  s.set_definition(kDefinition);
  s.set_prompt_tag("ptxb-basic");
  s.set_sample_index(sample);
  s.set_num_turns(4);
  s.set_target_speedup(1.5);
  s.set_state(state);
  if (state == v1::FAILED) {
    s.set_failure_class(v1::TERMINAL);
    s.set_reason("context window exceeded");
  }
  s.set_turns_completed(static_cast<int>(turns.size()));
  t.set_system_prompt("You write CUDA kernels.");
  t.set_task_prompt(absl::StrCat("Write gemm_export_test, sample ", sample, "."));
  const int64_t base = 1767225600000 + sample * 100000;
  for (int i = 0; i < static_cast<int>(turns.size()); ++i) {
    const TurnSpec& spec = turns[i];
    v1::Turn& turn = *t.add_turns();
    turn.set_index(i);
    turn.set_started_unix_ms(base + i * 10000);
    if (spec.kind == TurnKind::kAwaitingModel) {
      turn.set_state("model");
      continue;
    }
    v1::LlmResponse& r = *turn.mutable_response();
    r.set_text(absl::StrCat("Answer ", i, ", with a comma"));
    if (i == 0) r.set_reasoning("thinking...");
    r.mutable_usage()->set_input_tokens(1000 + i);
    r.mutable_usage()->set_output_tokens(200 + i);
    r.mutable_usage()->set_reasoning_tokens(50);
    r.mutable_usage()->set_cached_tokens(10);
    r.set_cost_usd((i + 1) / 100.0);
    r.set_finish_reason("stop");
    r.set_provider("openai");
    r.set_latency_ms(1234);
    if (spec.kind != TurnKind::kNoCode) {
      turn.set_kernel_source(KernelSource(sample, i, language));
      turn.set_kernel_sha256(Sha256Hex(turn.kernel_source()));
    }
    if (spec.kind == TurnKind::kAwaitingEval) {
      turn.set_state("eval");
      continue;
    }
    turn.set_state("done");
    turn.set_finished_unix_ms(base + i * 10000 + 5000);
    if (spec.kind == TurnKind::kNoCode) {
      turn.set_feedback("No ```cpp code block could be extracted from your answer.");
      continue;
    }
    v1::EvalResult& e = *turn.mutable_eval();
    e.set_simulated(spec.simulated);
    e.set_gpu_model("NVIDIA H200");
    e.set_toolkit_version("12.8");
    e.set_wall_time_ms(4000 + i);
    e.set_worker_id("worker-1");
    e.set_compile_log("ptxas info    : Used 64 registers");
    switch (spec.kind) {
      case TurnKind::kCompileError:
        e.set_status(v1::COMPILE_ERROR);
        e.set_compile_log("kernel.cu(3): error: expected a \";\"");
        break;
      case TurnKind::kIncorrect:
        e.set_status(v1::INCORRECT_NUMERICAL);
        *e.add_traces() = Trace(kWorkload1, 8, v1::INCORRECT_NUMERICAL, 0);
        *e.add_traces() = Trace(kWorkload2, 16, v1::PASSED, 1.25);
        break;
      case TurnKind::kCorrect:
        e.set_status(v1::PASSED);
        e.set_all_passed(true);
        *e.add_traces() = Trace(kWorkload1, 8, v1::PASSED, spec.speedup);
        *e.add_traces() = Trace(kWorkload2, 16, v1::PASSED, 2 * spec.speedup);
        e.set_min_speedup(spec.speedup);
        break;
      case TurnKind::kCudnn:
        e.set_status(v1::LIBRARY_FALLBACK);
        e.set_error("The kernel uses cuDNN (cudnnCreate) instead of hand-written kernels");
        break;
      case TurnKind::kCompiled:
        e.set_status(v1::COMPILED);
        break;
      default:
        break;
    }
    turn.set_feedback(absl::StrCat("Evaluation feedback of turn ", i, "\nPlease fix the issues."));
  }
  return t;
}

}  // namespace ptxbench::exports::testing
