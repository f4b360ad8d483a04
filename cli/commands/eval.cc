// `ptxbench eval KERNEL --definition D`: a one-off evaluation of a kernel
// file on this machine. With a GPU (and the runner built) it is the full
// evaluation a worker does — the kernel runs in a sandboxed runner process,
// never in this one; without, compile-only (build, resources, PTX census,
// vendor-library check), and it says so.
#include <map>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "cli/client/client.h"
#include "cli/commands/commands.h"
#include "cli/terminal/format.h"
#include "cli/terminal/progress.h"
#include "cli/views/eval_envelope.h"
#include "common/file.h"
#include "common/hash.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "worker/compile_only.h"
#include "worker/evaluation_stack.h"
#include "worker/gpu/device_info.h"
#include "worker/gpu_eval.h"
#include "worker/torch_probe.h"
#include "workloads/native_reference.h"
#include "workloads/registry.h"
#include "workloads/solution.h"

namespace ptxbench::cli {
namespace {

namespace v1 = ::ptxbench::v1;

absl::StatusOr<std::string> ReadKernel(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return absl::NotFoundError(absl::StrCat("cannot read kernel file ", path));
  return text;
}

// --language, else from the file: raw PTX (.ptx), Triton (.py, a
// kernel.py), a FlashInfer-Trace solution (a JSON document with "spec" and
// "sources"), or CUDA.
std::string Language(const Invocation& inv, const std::string& path, const std::string& text) {
  if (inv.args.Has("language")) return inv.args.Get("language");
  if (absl::EndsWith(path, ".ptx")) return "ptx";
  if (absl::EndsWith(path, ".py")) return "triton";
  return workloads::LooksLikeSolution(text) ? "solution" : "cuda";
}

// A Triton kernel runs in the Python of the PyTorch references, which must
// have Triton too (worker/torch_probe.h).
absl::Status UseTriton(const Invocation& inv, worker::GpuEvalOptions* options) {
  const worker::TritonProbe probe =
      worker::ProbeTriton(worker::ProbeTorch(inv.args.Get("torch-python", "auto")));
  if (!probe.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "a Triton kernel needs --torch-python PATH, a Python with torch, Triton and CUDA (",
        probe.why_not, ")"));
  }
  inv.err() << "triton " << probe.version << " (" << probe.python
            << "); note: what its timed calls run is not yet censused, so a run() that calls "
               "torch is not caught (docs/SECURITY.md)\n";
  options->triton_python = probe.python;
  return absl::OkStatus();
}

void PrintText(const Invocation& inv, const v1::EvalResult& r) {
  inv.out() << "status    " << v1::EvalStatus_Name(r.status())
            << (r.status() == v1::COMPILED ? "  (compile-only: built, not run)" : "") << "\n";
  for (const v1::KernelResources& k : r.resources()) {
    inv.out() << "kernel    " << k.kernel_name() << ": " << k.registers() << " registers, "
              << k.shared_mem_bytes() << " B smem, " << k.spill_store_bytes() << "/"
              << k.spill_load_bytes() << " B spill stores/loads\n";
  }
  if (!r.ptx().sha256().empty()) {
    std::vector<std::string> families;
    for (const auto& [family, n] : r.ptx().instruction_counts()) {
      families.push_back(absl::StrCat(family, " ", n));
    }
    inv.out() << "ptx       " << r.ptx().virtual_arch() << ", " << r.ptx().size_bytes()
              << " bytes; " << (families.empty() ? "no tensor-core/bulk-copy families"
                                                 : absl::StrJoin(families, ", "))
              << "\n";
  }
  for (const v1::WorkloadTrace& t : r.traces()) {
    std::vector<std::string> axes;
    // A proto map has no order: sorted, so every line reads the same way.
    for (const auto& [name, value] : std::map<std::string, int64_t>(t.axes().begin(), t.axes().end())) {
      axes.push_back(absl::StrCat(name, "=", value));
    }
    inv.out() << "workload  " << t.workload_uuid().substr(0, 8) << " (" << absl::StrJoin(axes, ", ")
              << "): " << v1::EvalStatus_Name(t.status());
    if (t.latency_ms() > 0) {
      inv.out() << absl::StrFormat("  %.4f ms vs reference%s %.4f ms = %.3fx, %.1f%% of roofline",
                                   t.latency_ms(), ReferenceLabel(t.reference()), t.reference_latency_ms(),
                                   t.speedup(), 100 * t.roofline_fraction());
    }
    inv.out() << "\n";
    for (const std::string& e : t.errors()) inv.out() << "          " << e << "\n";
  }
  const bool compiled_only = r.status() == v1::COMPILED;
  if (!compiled_only && r.traces_size() == 0 && !r.compile_log().empty()) {
    inv.out() << "compile log:\n" << r.compile_log() << "\n";
  }
  if (!r.error().empty()) inv.out() << "error     " << r.error() << "\n";
}

bool IsTerminal(v1::TrajectoryState s) {
  return s == v1::SUBMITTED || s == v1::LIMITS_EXCEEDED || s == v1::FAILED || s == v1::CANCELLED;
}

// A definition no native reference computes is checked against its PyTorch
// reference, run by --torch-python here (probed only then: importing torch
// takes seconds). An error says why it cannot be evaluated here.
absl::Status UseTorchReferences(const Invocation& inv, const workloads::Definition& d,
                                worker::GpuEvalOptions* options) {
  PTXB_ASSIGN_OR_RETURN(const workloads::ReferenceKind kind, workloads::ChooseReference(d));
  if (kind == workloads::ReferenceKind::kNative) return absl::OkStatus();
  const worker::TorchProbe probe = worker::ProbeTorch(inv.args.Get("torch-python", "auto"));
  if (!probe.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        workloads::NativeReference(d).status().message(), "; its PyTorch reference needs "
        "--torch-python PATH, a Python with torch and CUDA (", probe.why_not, ")"));
  }
  inv.err() << "reference: the definition's PyTorch code, torch " << probe.version << " ("
            << probe.python << ")\n";
  options->torch_python = probe.python;
  return absl::OkStatus();
}

// The evaluation through the scheduler: a one-off experiment of one turn,
// followed until its trajectory ends. FULL needs a worker with a GPU; with
// none registered it is compile-only, and says so.
absl::StatusOr<v1::EvalResult> EvaluateThroughScheduler(const Invocation& inv,
                                                        v1::EvalRequest* request,
                                                        std::string* trajectory_id) {
  SchedulerClient client = Connect(inv);
  PTXB_ASSIGN_OR_RETURN(v1::ListExecutorsResponse executors, client.ListExecutors());
  bool worker = false, gpu_worker = false;
  for (const v1::ExecutorInfo& e : executors.executors()) {
    if (e.kind() != v1::WORKER || e.status() != "active") continue;
    worker = true;
    for (const v1::Gpu& g : e.capabilities().gpus()) gpu_worker |= g.healthy();
  }
  if (!worker) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no worker is registered at the scheduler ", inv.global.scheduler,
        " (start ptxbench-worker, or evaluate here with --local)"));
  }
  if (request->mode() == v1::FULL && !gpu_worker) {
    inv.err() << "no worker with a GPU at " << inv.global.scheduler
              << ": evaluating compile-only\n";
    request->set_mode(v1::COMPILE_ONLY);
  }
  v1::SubmitEvalRequest submit;
  *submit.mutable_eval() = *request;
  PTXB_ASSIGN_OR_RETURN(v1::SubmitEvalResponse submitted, client.SubmitEval(submit));
  *trajectory_id = submitted.trajectory_id();
  absl::StatusOr<v1::GetTrajectoryResponse> last = absl::UnknownError("not polled");
  WithElapsedProgress(
      inv.err(), inv.env.err_is_terminal,
      absl::StrCat("evaluating through the scheduler at ", inv.global.scheduler, " (",
                   request->mode() == v1::FULL ? "GPU" : "compile-only", ", trajectory ",
                   submitted.trajectory_id(), ")..."),
      [&] {
        while (true) {
          last = client.GetTrajectory(submitted.trajectory_id());
          if (!last.ok() || IsTerminal(last->trajectory().summary().state())) return;
          absl::SleepFor(absl::Milliseconds(250));
        }
      });
  if (!last.ok()) return last.status();
  const v1::Trajectory& t = last->trajectory();
  if (t.turns().empty() || !t.turns(0).has_eval()) {
    return absl::AbortedError(absl::StrCat("trajectory ", submitted.trajectory_id(),
                                           " ended without an evaluation: ",
                                           v1::TrajectoryState_Name(t.summary().state()), " ",
                                           t.summary().reason()));
  }
  return t.turns(0).eval();
}

absl::Status RunEval(const Invocation& inv) {
  const std::string path = inv.args.positionals[0];
  PTXB_ASSIGN_OR_RETURN(std::string source, ReadKernel(path));
  std::string language = Language(inv, path, source);
  std::string definition = inv.args.Get("definition", "");
  if (language == "solution") {
    // The solution names its definition; a different --definition is a mistake.
    absl::StatusOr<workloads::Solution> solution = workloads::ParseSolution(source, path);
    if (!solution.ok()) return solution.status();
    if (solution->language == "triton") {
      // Evaluated as what it is: its kernel.py, in Triton.
      PTXB_ASSIGN_OR_RETURN(source, workloads::TritonModuleOf(*solution));
      language = "triton";
    } else {
      PTXB_RETURN_IF_ERROR(workloads::CheckSolutionSupported(*solution));
    }
    if (!definition.empty() && definition != solution->definition) {
      return UsageError(absl::StrCat("--definition ", definition, " but the solution ", path,
                                     " is for ", solution->definition));
    }
    definition = solution->definition;
  }
  if (definition.empty()) return UsageError("eval needs --definition D");
  PTXB_ASSIGN_OR_RETURN(auto definitions, LoadDefinitions(inv));
  PTXB_RETURN_IF_ERROR(definitions->Find(definition).status());

  v1::EvalRequest request;
  request.set_definition(definition);
  request.set_language(language);
  request.set_kernel_source(source);
  request.set_kernel_sha256(Sha256Hex(source));
  for (const std::string& w : inv.args.GetAll("workload")) request.add_workload_uuids(w);

  // A scheduler configured (--scheduler or $PTXBENCH_SCHEDULER) and no
  // --local: the evaluation runs there, on its workers.
  const bool via_scheduler =
      !inv.args.Has("local") && (inv.args.Has("scheduler") || !inv.env.scheduler_env.empty());
  std::string trajectory_id;
  bool compile_only = inv.args.Has("compile-only");
  v1::EvalResult result;
  if (via_scheduler) {
    request.set_mode(compile_only ? v1::COMPILE_ONLY : v1::FULL);
    request.set_target_speedup(1.0);
    absl::StatusOr<v1::EvalResult> remote = EvaluateThroughScheduler(inv, &request, &trajectory_id);
    if (!remote.ok()) {
      return WithExitCode(absl::Status(remote.status().code(),
                                       absl::StrCat("evaluation failed: ", remote.status().message())),
                          2);
    }
    result = *std::move(remote);
    compile_only = request.mode() == v1::COMPILE_ONLY;
  } else {
    // The same stack and start-up checks as a worker's (with the limits of
    // its defaults).
    worker::EvaluationSettings settings;
    settings.cache_dir = inv.args.Get("cache-dir", "");
    settings.compile_only = compile_only;
    absl::StatusOr<std::unique_ptr<worker::EvaluationStack>> stack =
        worker::EvaluationStack::Create(settings);
    if (!stack.ok()) {
      return WithExitCode(absl::Status(stack.status().code(),
                                       absl::StrCat("cannot evaluate here: ", stack.status().message())),
                          2);
    }
    for (const std::string& w : (*stack)->protections().warnings) {
      inv.err() << "ptxbench eval: warning: " << w << "\n";
    }
    // A GPU and the runner: full evaluation; otherwise compile-only.
    std::string why_compile_only = compile_only ? "--compile-only" : (*stack)->why_no_gpu();
    std::optional<gpu::GpuInfo> gpu;
    const std::vector<gpu::GpuInfo>& gpus = (*stack)->gpus();
    if (!gpus.empty()) {
      const int index = inv.args.Has("gpu") ? std::atoi(inv.args.Get("gpu").c_str()) : 0;
      if (index < 0 || index >= static_cast<int>(gpus.size())) {
        return UsageError(absl::StrCat("--gpu ", index, ": this machine has ", gpus.size(),
                                       " GPU(s)"));
      }
      gpu = gpus[index];
    }
    compile_only = !gpu.has_value();
    request.set_mode(compile_only ? v1::COMPILE_ONLY : v1::FULL);
    // Built for this GPU; compile-only, for the default (Hopper).
    if (gpu) request.add_architectures(gpu->sm_arch);
    if (!compile_only) {
      PTXB_RETURN_IF_ERROR(
          UseTorchReferences(inv, **definitions->Find(definition), &(*stack)->gpu_options()));
      if (language == "triton") PTXB_RETURN_IF_ERROR(UseTriton(inv, &(*stack)->gpu_options()));
    }
    const std::string label =
        compile_only
            ? absl::StrCat("compile-only evaluation (", why_compile_only, ")...")
            : absl::StrCat("evaluating on GPU ", gpu->index, " (", gpu->name,
                           "): build, correctness trials, timing against the reference...");
    WithElapsedProgress(inv.err(), inv.env.err_is_terminal, label, [&] {
      if (compile_only) {
        result = worker::EvaluateCompileOnly((*stack)->compiler(), *definitions, request, "local",
                                             (*stack)->toolkit_version());
      } else {
        bool suspect = false;
        result = (*stack)->Evaluator(definitions.get(), "local").Evaluate(request, *gpu, &suspect);
      }
    });
  }

  if (inv.global.json || inv.args.Has("json")) {
    EvalContext context;
    context.evaluation_id = NewEvaluationId();
    context.task_id = trajectory_id;
    context.definition = request.definition();
    context.workload_uuids.assign(request.workload_uuids().begin(),
                                  request.workload_uuids().end());
    context.kernel_sha256 = request.kernel_sha256();
    context.timestamp = absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone());
    inv.out() << EvalEnvelope(context, result).dump(2) << "\n";
  } else {
    PrintText(inv, result);
  }
  const int code = EvalExitCode(result, compile_only);
  if (code == 0) return absl::OkStatus();
  return WithExitCode(
      absl::AbortedError(code == 2 ? absl::StrCat("evaluation failed: ", result.error())
                                   : absl::StrCat("kernel ", path, ": ",
                                                  v1::EvalStatus_Name(result.status()))),
      code);
}

}  // namespace

void AddEvalCommand(std::vector<Command>* commands) {
  commands->push_back(
      {{"eval",
        "KERNEL",
        1,
        1,
        {{"definition", true, false, "D",
          "workload definition the kernel implements (required but for a solution JSON)"},
         {"workload", true, true, "UUID", "only these workloads (default: all)"},
         {"language", true, false, "cuda|solution|ptx|triton",
          "kernel form (default: .ptx is PTX, .py Triton, a solution JSON a solution (a Triton "
          "one is its kernel.py), else CUDA)"},
         kDatasetFlag,
         kPreferDatasetFlag,
         {"cache-dir", true, false, "DIR", "build cache folder (default: none)"},
         {"gpu", true, false, "N", "GPU to evaluate on (default: 0)"},
         {"compile-only", false, false, "", "only build and inspect, even with a GPU"},
         {"local", false, false, "", "evaluate on this machine even when a scheduler is set"},
         {"torch-python", true, false, "PATH|auto|none",
          "Python with torch and CUDA for a definition only its PyTorch reference computes "
          "(default: auto, python3 on PATH)"},
         {"json", false, false, "", "print the ptxbench.eval.v1 envelope"}},
        "evaluate one kernel file on this machine",
        "Evaluates KERNEL as a worker would. With a scheduler set (--scheduler or\n"
        "$PTXBENCH_SCHEDULER) it runs there, as a one-turn experiment of its own (on a GPU\n"
        "worker, or compile-only when none is registered); otherwise, or with --local, here:\n"
        "on a GPU, build, check against the reference\n"
        "(3 trials of fresh inputs) and time against it; without a GPU, compile-only (build,\n"
        "resources, PTX census, vendor-library use). A raw-PTX file (.ptx) carries its launch\n"
        "spec as a line `// ptxbench-launch: {\"entry\": ..., \"grid\": [...], \"block\": [...]}`.\n"
        "Exit codes: 0 passed (compile-only: built),\n"
        "1 the kernel failed, 2 infrastructure error."},
       RunEval});
}

}  // namespace ptxbench::cli
