#include "worker/torch_probe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace ptxbench::worker {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Fake Pythons: shell scripts that answer the probe as a Python would.
class TorchProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           absl::StrCat("torch_probe_test_", getpid(),
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Script(const std::string& name, const std::string& body) {
    const fs::path path = dir_ / name;
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    fs::permissions(path, fs::perms::owner_all);
    return path.string();
  }

  fs::path dir_;
};

TEST_F(TorchProbeTest, APythonWithTorchAndCudaPrintsItsVersion) {
  // The probe imports torch and asks for CUDA; warnings may come first.
  const std::string python = Script(
      "python", "case \"$2\" in *'import torch'*'torch.cuda.is_available()'*) ;; *) exit 9;; esac\n"
                "echo 'UserWarning: something' >&2\necho 2.11.0+cu130");
  const TorchProbe probe = ProbeTorch(python);
  EXPECT_TRUE(probe.ok()) << probe.why_not;
  EXPECT_EQ(probe.version, "2.11.0+cu130");
  EXPECT_EQ(probe.Capability(), absl::StrCat("torch 2.11.0+cu130 at ", python));
}

TEST_F(TorchProbeTest, AFailingPythonSaysWhy) {
  const std::string python =
      Script("python", "echo \"ModuleNotFoundError: No module named 'torch'\" >&2; exit 1");
  const TorchProbe probe = ProbeTorch(python);
  EXPECT_FALSE(probe.ok());
  EXPECT_EQ(probe.Capability(), "");
  EXPECT_EQ(probe.why_not, "exit code 1: ModuleNotFoundError: No module named 'torch'");
}

TEST_F(TorchProbeTest, AHangingPythonIsStoppedAtTheDeadline) {
  const std::string python = Script("python", "sleep 30");
  const absl::Time start = absl::Now();
  const TorchProbe probe = ProbeTorch(python, absl::Milliseconds(300));
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  EXPECT_FALSE(probe.ok());
  EXPECT_EQ(probe.why_not, "\"import torch\" did not finish within 300ms");
}

TEST_F(TorchProbeTest, NoneAutoAndAMissingPath) {
  EXPECT_EQ(ProbeTorch("none").why_not, "--torch-python none");
  const TorchProbe missing = ProbeTorch((dir_ / "nope").string());
  EXPECT_FALSE(missing.ok());
  EXPECT_THAT(missing.why_not, HasSubstr("exit code 127"));
  // auto: python3 on PATH.
  const std::string python = Script("python3", "echo 2.9.1");
  const char* old = std::getenv("PATH");
  const std::string saved = old == nullptr ? "" : old;
  setenv("PATH", dir_.c_str(), 1);
  const TorchProbe found = ProbeTorch("auto");
  setenv("PATH", "/nonexistent", 1);
  const TorchProbe none = ProbeTorch("auto");
  setenv("PATH", saved.c_str(), 1);
  EXPECT_EQ(found.Capability(), absl::StrCat("torch 2.9.1 at ", python));
  EXPECT_EQ(none.why_not, "no python3 on PATH (--torch-python auto); pass --torch-python PATH");
}

// Triton is probed in the Python that runs torch: it must import triton
// beside torch and see a CUDA device; its version is what registers.
TEST_F(TorchProbeTest, TritonIsProbedInTheTorchPython) {
  const std::string python = Script(
      "python",
      "case \"$2\" in\n"
      "  *'import torch, triton, triton.language'*'torch.cuda.is_available()'*"
      "'triton.__version__'*) echo 3.6.0;;\n"
      "  *'import torch'*) echo 2.11.0+cu130;;\n"
      "  *) exit 9;;\n"
      "esac");
  const TorchProbe torch = ProbeTorch(python);
  ASSERT_TRUE(torch.ok()) << torch.why_not;
  const TritonProbe triton = ProbeTriton(torch);
  EXPECT_TRUE(triton.ok()) << triton.why_not;
  EXPECT_EQ(triton.Capability(), absl::StrCat("triton 3.6.0 at ", python));
}

TEST_F(TorchProbeTest, NoTritonSaysWhyAndRegistersNothing) {
  // torch works, triton does not import.
  const std::string python = Script(
      "python",
      "case \"$2\" in *triton*) echo \"ModuleNotFoundError: No module named 'triton'\" >&2;"
      " exit 1;; esac\necho 2.11.0");
  const TorchProbe torch = ProbeTorch(python);
  ASSERT_TRUE(torch.ok()) << torch.why_not;
  const TritonProbe triton = ProbeTriton(torch);
  EXPECT_FALSE(triton.ok());
  EXPECT_EQ(triton.Capability(), "");
  EXPECT_EQ(triton.why_not, "exit code 1: ModuleNotFoundError: No module named 'triton'");
  // No torch at all: Triton is not even tried.
  const TritonProbe none = ProbeTriton(ProbeTorch("none"));
  EXPECT_FALSE(none.ok());
  EXPECT_EQ(none.python, "");
  EXPECT_EQ(none.why_not, "no PyTorch to run it beside (--torch-python none)");
  // A Triton that hangs on import is stopped.
  const std::string slow = Script("slow", "case \"$2\" in *triton*) sleep 30;; esac\necho 2.11.0");
  const TritonProbe hung = ProbeTriton(ProbeTorch(slow), absl::Milliseconds(300));
  EXPECT_EQ(hung.why_not, "\"import triton\" did not finish within 300ms");
}

}  // namespace
}  // namespace ptxbench::worker
