// `ptxbench eval KERNEL --definition D`: a one-off evaluation of a kernel
// file, in-process. This build evaluates compile-only (build, resources, PTX
// census, vendor-library check): running kernels on a GPU comes with the GPU
// evaluation step of the worker, and evaluation through a scheduler with it.
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "cli/commands.h"
#include "cli/eval_envelope.h"
#include "common/data_dir.h"
#include "common/hash.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "worker/compile_only.h"
#include "workloads/registry.h"

namespace ptxbench::cli {
namespace {

namespace v1 = ::ptxbench::v1;

absl::StatusOr<std::string> ReadKernel(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read kernel file ", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Language(const Invocation& inv, const std::string& path) {
  if (inv.args.Has("language")) return inv.args.Get("language");
  return path.size() > 4 && path.substr(path.size() - 4) == ".ptx" ? "ptx" : "cuda";
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
  if (r.status() != v1::COMPILED && !r.compile_log().empty()) {
    inv.out() << "compile log:\n" << r.compile_log() << "\n";
  }
  if (!r.error().empty()) inv.out() << "error     " << r.error() << "\n";
}

absl::Status RunEval(const Invocation& inv) {
  const std::string path = inv.args.positionals[0];
  if (!inv.args.Has("definition")) return UsageError("eval needs --definition D");
  PTXB_ASSIGN_OR_RETURN(std::string source, ReadKernel(path));
  std::vector<std::string> roots = {workloads::DefinitionRegistry::BundledRoot()};
  for (const std::string& dir : inv.args.GetAll("dataset")) roots.push_back(dir);
  PTXB_ASSIGN_OR_RETURN(auto definitions, workloads::DefinitionRegistry::Load(roots));
  PTXB_RETURN_IF_ERROR(definitions->Find(inv.args.Get("definition")).status());

  worker::CompilerOptions options;
  options.abi_include_dir = DataDir() + "/worker/kernel_abi";
  options.cache_dir = inv.args.Get("cache-dir", "");
  absl::StatusOr<std::string> version = worker::Compiler::ToolkitVersion(options.nvcc);
  worker::Compiler compiler(options);
  v1::EvalRequest request;
  request.set_definition(inv.args.Get("definition"));
  request.set_language(Language(inv, path));
  request.set_kernel_source(source);
  request.set_kernel_sha256(Sha256Hex(source));
  request.set_mode(v1::COMPILE_ONLY);
  for (const std::string& w : inv.args.GetAll("workload")) request.add_workload_uuids(w);
  v1::EvalResult result = worker::EvaluateCompileOnly(
      compiler, *definitions, request, "local", version.ok() ? *version : "");

  if (inv.global.json || inv.args.Has("json")) {
    EvalContext context;
    context.evaluation_id = NewEvaluationId();
    context.definition = request.definition();
    context.workload_uuids.assign(request.workload_uuids().begin(),
                                  request.workload_uuids().end());
    context.kernel_sha256 = request.kernel_sha256();
    context.timestamp = absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone());
    inv.out() << EvalEnvelope(context, result).dump(2) << "\n";
  } else {
    inv.err() << "compile-only evaluation: this build does not run kernels on a GPU yet\n";
    PrintText(inv, result);
  }
  const int code = EvalExitCode(result, /*compile_only=*/true);
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
        {{"definition", true, false, "D", "workload definition the kernel implements (required)"},
         {"workload", true, true, "UUID", "only these workloads (default: all)"},
         {"language", true, false, "cuda|ptx", "kernel language (default: from the file name)"},
         {"dataset", true, true, "DIR", "also load a FlashInfer-Trace dataset folder"},
         {"cache-dir", true, false, "DIR", "build cache folder (default: none)"},
         {"json", false, false, "", "print the ptxbench.eval.v1 envelope"}},
        "evaluate one kernel file locally (compile-only in this build)",
        "Builds KERNEL as a worker would and reports status, resources, PTX census and\n"
        "vendor-library use. Exit codes: 0 built, 1 the kernel failed, 2 infrastructure error."},
       RunEval});
}

}  // namespace ptxbench::cli
