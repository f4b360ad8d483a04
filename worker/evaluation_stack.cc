#include "worker/evaluation_stack.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/cache_dir.h"
#include "common/data_dir.h"
#include "common/log.h"

namespace ptxbench::worker {
namespace {

// The hashes of the toolkit's vendor kernels (vendor_code_table.h), from the
// lib64 beside nvcc and the system's library folder; kept in this user's
// cache folder (one per machine and user: the table depends on the toolkit's
// files only) so that a restart, or another worker or `ptxbench eval`,
// reads them back. None found, or a table that cannot be made: logged, and
// the scan goes on by names.
std::shared_ptr<const VendorCodeTable> LoadVendorCode(const std::string& nvcc) {
  namespace fs = std::filesystem;
  const std::string lib64 = (fs::path(nvcc).parent_path().parent_path() / "lib64").string();
  const std::vector<VendorLibrary> libraries =
      VendorCodeTable::FindLibraries({lib64, "/usr/lib/x86_64-linux-gnu"});
  if (libraries.empty()) {
    LogWarning("no vendor library found to hash: built modules are checked by kernel names only",
               {{"searched", lib64 + ", /usr/lib/x86_64-linux-gnu"}});
    return nullptr;
  }
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<VendorCodeTable>> table =
      VendorCodeTable::LoadOrBuild(libraries, UserCacheDir() + "/vendor-code");
  if (!table.ok()) {
    LogWarning("vendor code table not made: built modules are checked by kernel names only",
               {{"error", table.status().ToString()}});
    return nullptr;
  }
  LogInfo("vendor code table ready",
          {{"libraries", std::to_string(libraries.size())},
           {"kernel_sections", std::to_string((*table)->size())},
           {"seconds", absl::StrCat(absl::ToDoubleSeconds(absl::Now() - start))}});
  return std::shared_ptr<const VendorCodeTable>(std::move(*table));
}

}  // namespace

absl::StatusOr<std::unique_ptr<EvaluationStack>> EvaluationStack::Create(
    const EvaluationSettings& settings) {
  auto stack = std::unique_ptr<EvaluationStack>(new EvaluationStack);
  stack->gpu_options_ = settings.gpu;
  stack->compiler_options_.abi_include_dir = DataDir() + "/worker/kernel_abi";
  stack->compiler_options_.cache_dir = settings.cache_dir;
  stack->compiler_options_.cache_bytes = settings.cache_bytes;
  stack->protections_ =
      ConfigureSandbox(settings.sandbox, &stack->compiler_options_, &stack->gpu_options_);
  absl::StatusOr<std::string> version = Compiler::ToolkitVersion(stack->compiler_options_.nvcc);
  if (!version.ok()) return version.status();
  stack->toolkit_version_ = *std::move(version);
  stack->compiler_options_.vendor_code =
      LoadVendorCode(stack->compiler_options_.nvcc);
  stack->compiler_ = std::make_unique<Compiler>(stack->compiler_options_);

  GpuEvalOptions& o = stack->gpu_options_;
  o.runner_path = FindRunner();
  if (stack->protections_.sandbox_works) {
    if (absl::Status readable =
            CheckSandboxCanRead(stack->compiler_options_, o.runner_path, settings.sandbox.uid);
        !readable.ok()) {
      return readable;
    }
  }
  stack->FindGpus(settings.compile_only);
  return stack;
}

void EvaluationStack::FindGpus(bool compile_only) {
  if (compile_only) {
    why_no_gpu_ = "compile-only asked for";
    return;
  }
  absl::StatusOr<gpu::GpuInventory> inventory = gpu::DiscoverGpus();
  if (!inventory.ok()) {
    why_no_gpu_ = absl::StrCat("GPU discovery failed: ", inventory.status().message());
  } else if (inventory->gpus.empty()) {
    why_no_gpu_ = absl::StrCat("no GPU (", inventory->why_none, ")");
  } else if (gpu_options_.runner_path.empty()) {
    why_no_gpu_ = absl::StrCat(inventory->gpus.size(),
                               " GPU(s) but ptxbench-runner is not built (it needs nvcc at build "
                               "time; or set PTXBENCH_RUNNER)");
  } else {
    gpus_ = inventory->gpus;
  }
}

GpuEvaluator& EvaluationStack::Evaluator(const workloads::DefinitionRegistry* definitions,
                                         const std::string& worker_id) {
  if (evaluator_ == nullptr) {
    evaluator_ = std::make_unique<GpuEvaluator>(compiler_.get(), definitions, gpu_options_,
                                                worker_id, toolkit_version_);
  }
  return *evaluator_;
}

}  // namespace ptxbench::worker
