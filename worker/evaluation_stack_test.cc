// The start-up of an evaluation stack (evaluation_stack.h), as the worker
// and `ptxbench eval --local` both make it, without a GPU.
#include "worker/evaluation_stack.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"

namespace ptxbench::worker {
namespace {

namespace fs = std::filesystem;

TEST(EvaluationStackTest, CompileOnlyOffersNoGpuSaysWhyAndStillBuildsAnEvaluator) {
  EvaluationSettings settings;
  settings.compile_only = true;
  absl::StatusOr<std::unique_ptr<EvaluationStack>> stack = EvaluationStack::Create(settings);
  if (!stack.ok()) {
    // Only a missing toolkit may stop it here, and it says so.
    EXPECT_EQ(stack.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_NE(stack.status().message().find("CUDA tool not found"), std::string::npos)
        << stack.status();
    return;
  }
  EXPECT_TRUE((*stack)->gpus().empty());
  EXPECT_EQ((*stack)->why_no_gpu(), "compile-only asked for");
  EXPECT_NE((*stack)->toolkit_version(), "");
  EXPECT_TRUE(absl::EndsWith((*stack)->compiler_options().abi_include_dir, "/worker/kernel_abi"))
      << (*stack)->compiler_options().abi_include_dir;
  (*stack)->gpu_options().timed_calls = 7;
  EXPECT_EQ((*stack)->gpu_options().timed_calls, 7);
}

// The readability check a worker always made now stops `eval --local` too:
// an installation made under umask 077 is named at the start.
TEST(EvaluationStackTest, AnInstallationTheSandboxCannotReadStopsTheStart) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: without it the sandbox runs as the caller's uid";
  const fs::path dir = fs::path(::testing::TempDir()) / ("ptxb_stack_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "worker" / "kernel_abi" / "ptxbench");
  const fs::path abi = dir / "worker" / "kernel_abi" / "ptxbench" / "kernel_abi.h";
  std::ofstream(abi) << "// abi\n";
  chmod(abi.c_str(), 0600);
  const char* old = getenv("PTXBENCH_DATA_DIR");
  const std::string saved = old != nullptr ? old : "";
  setenv("PTXBENCH_DATA_DIR", dir.c_str(), 1);
  EvaluationSettings settings;
  settings.compile_only = true;
  absl::StatusOr<std::unique_ptr<EvaluationStack>> stack = EvaluationStack::Create(settings);
  if (old != nullptr) {
    setenv("PTXBENCH_DATA_DIR", saved.c_str(), 1);
  } else {
    unsetenv("PTXBENCH_DATA_DIR");
  }
  fs::remove_all(dir);
  if (stack.ok() && !(*stack)->protections().sandbox_works) {
    GTEST_SKIP() << "no sandbox on this machine: nothing runs as another uid";
  }
  ASSERT_FALSE(stack.ok());
  if (stack.status().message().find("CUDA tool not found") != std::string::npos) {
    GTEST_SKIP() << "no CUDA toolkit: the stack stops before the check";
  }
  EXPECT_NE(stack.status().message().find("kernel_abi.h is not readable by the sandbox uid 65534"),
            std::string::npos)
      << stack.status();
}

}  // namespace
}  // namespace ptxbench::worker
