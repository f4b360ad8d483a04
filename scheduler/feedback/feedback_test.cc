#include "scheduler/feedback/feedback.h"

#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

// Suite names start with "feedback_" so that `ctest -R feedback` selects them.
namespace ptxbench::scheduler {
namespace {

using ::ptxbench::v1::EvalResult;
using ::ptxbench::v1::WorkloadTrace;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> Lines(const std::string& text) { return absl::StrSplit(text, '\n'); }

WorkloadTrace* AddPassed(EvalResult* r, double speedup, double kernel_ms, double ref_ms) {
  WorkloadTrace* t = r->add_traces();
  (*t->mutable_axes())["M"] = 8192;
  (*t->mutable_axes())["N"] = 7168;
  (*t->mutable_axes())["K"] = 5120;
  t->set_status(v1::PASSED);
  t->set_speedup(speedup);
  t->set_latency_ms(kernel_ms);
  t->set_reference_latency_ms(ref_ms);
  return t;
}

// Two passing workloads, min speedup 1.234, census with wgmma.
EvalResult PassingResult() {
  EvalResult r;
  r.set_status(v1::PASSED);
  r.set_all_passed(true);
  AddPassed(&r, 1.234, 0.7123, 0.8790);
  WorkloadTrace* t = AddPassed(&r, 2.5, 0.1, 0.25);
  (*t->mutable_axes())["M"] = 16;
  r.set_min_speedup(1.234);
  auto* res = r.add_resources();
  res->set_kernel_name("gemm_kernel");
  res->set_registers(168);
  res->set_shared_mem_bytes(98304);
  res->set_stack_frame_bytes(0);
  r.mutable_ptx()->set_sha256("abc");
  (*r.mutable_ptx()->mutable_instruction_counts())["wgmma."] = 12;
  return r;
}

TEST(feedback_render, TargetMetEndsWithAchievedSuffix) {
  EvalResult r = PassingResult();
  std::string text = RenderEvalFeedback(r, 1.2);
  std::vector<std::string> lines = Lines(text);
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0], "Evaluation results:");
  EXPECT_EQ(lines[1],
            "[K=5120, M=8192, N=7168] PASSED — speedup: 1.234x (kernel: 0.7123ms, ref: 0.8790ms)");
  EXPECT_EQ(lines[2],
            "[K=5120, M=16, N=7168] PASSED — speedup: 2.500x (kernel: 0.1000ms, ref: 0.2500ms)");
  EXPECT_EQ(lines.back(), "Target speedup 1.200x achieved! Min speedup: 1.234x.");
  EXPECT_THAT(text, HasSubstr("Resources (ptxas):\n  gemm_kernel: 168 registers, 98304 bytes "
                              "smem, 0 bytes stack, 0 bytes spill stores, 0 bytes spill loads\n"));
  EXPECT_THAT(text, Not(HasSubstr("Instruction warning")));
  EXPECT_THAT(text, Not(HasSubstr("SIMULATED")));
  EXPECT_TRUE(TargetMet(r, 1.2));
  EXPECT_TRUE(TargetMet(r, 1.234));
}

TEST(feedback_render, TheMemcheckGatesReportIsTheFailingWorkloadsLog) {
  EvalResult r;
  r.set_status(v1::RUNTIME_ERROR);
  r.mutable_memcheck()->set_status(v1::RUNTIME_ERROR);
  WorkloadTrace* t = r.add_traces();
  (*t->mutable_axes())["M"] = 16;
  t->set_status(v1::RUNTIME_ERROR);
  t->set_log(
      "compute-sanitizer memcheck reported 1 error(s) on workload u1:\n"
      "========= Invalid __global__ write of size 4 bytes\n"
      "=========     at gemm_kernel+0x90 in /b/kernel.cu:12\n");
  t->add_errors("the memcheck gate found memory errors; not timed");
  const std::string text = RenderEvalFeedback(r, 1.0);
  EXPECT_THAT(text, HasSubstr("Evaluation FAILED:\nThe memcheck gate (compute-sanitizer memcheck, "
                              "before timing) found memory errors"));
  EXPECT_THAT(text, HasSubstr("[M=16] RUNTIME_ERROR\n"));
  EXPECT_THAT(text, HasSubstr("  ========= Invalid __global__ write of size 4 bytes\n"));
  EXPECT_THAT(text, HasSubstr("kernel.cu:12"));
  // A clean gate says nothing.
  r.mutable_memcheck()->set_status(v1::PASSED);
  EXPECT_THAT(RenderEvalFeedback(r, 1.0), Not(HasSubstr("memcheck gate (")));
}

TEST(feedback_render, CorrectButSlowSaysKeepOptimizing) {
  EvalResult r = PassingResult();
  std::string text = RenderEvalFeedback(r, 1.5);
  EXPECT_EQ(Lines(text).back(),
            "Kernel is correct. Min speedup: 1.234x (target: 1.500x). Keep optimizing.");
  EXPECT_FALSE(TargetMet(r, 1.5));
}

TEST(feedback_render, InstructionWarningWhenCensusLacksHopperFamilies) {
  EvalResult r = PassingResult();
  r.mutable_ptx()->mutable_instruction_counts()->clear();
  (*r.mutable_ptx()->mutable_instruction_counts())["mma.sync."] = 4;
  (*r.mutable_ptx()->mutable_instruction_counts())["wgmma."] = 0;
  std::string text = RenderEvalFeedback(r, 1.5);
  EXPECT_THAT(text, HasSubstr("\nInstruction warning: the PTX contains no Hopper tensor-core "
                              "(wgmma.) or bulk-copy (cp.async.bulk.) instructions."));

  // Said of a kernel built for Hopper; not of one built for Blackwell, which
  // has no wgmma.
  r.set_compile_target("sm_90a");
  EXPECT_THAT(RenderEvalFeedback(r, 1.5), HasSubstr("Instruction warning"));
  r.set_compile_target("sm_100a");
  EXPECT_THAT(RenderEvalFeedback(r, 1.5), Not(HasSubstr("Instruction warning")));
  r.set_compile_target("sm_90a");

  // A bulk copy alone is enough to silence it.
  (*r.mutable_ptx()->mutable_instruction_counts())["cp.async.bulk.tensor"] = 2;
  EXPECT_THAT(RenderEvalFeedback(r, 1.5), Not(HasSubstr("Instruction warning")));
}

TEST(feedback_render, TheSassCensusDecidesTheWarningWhereThereIsOne) {
  EvalResult r = PassingResult();
  r.set_compile_target("sm_90a");
  (*r.mutable_ptx()->mutable_instruction_counts())["wgmma."] = 8;  // promised in PTX...
  r.mutable_sass()->set_instructions(900);
  (*r.mutable_sass()->mutable_instruction_counts())["HMMA"] = 32;  // ...not what runs
  std::string text = RenderEvalFeedback(r, 1.5);
  EXPECT_THAT(text, HasSubstr("\nSASS (cuobjdump): 900 instructions; HMMA 32; no local-memory "
                              "loads or stores.\n"));
  EXPECT_THAT(text, HasSubstr("\nInstruction warning: the SASS the GPU runs contains no Hopper "
                              "tensor-core (HGMMA) or TMA/bulk-copy (UTMA*, UBLK*) instructions."));
  (*r.mutable_sass()->mutable_instruction_counts())["UTMALDG"] = 2;
  EXPECT_THAT(RenderEvalFeedback(r, 1.5), Not(HasSubstr("Instruction warning")));
  // An empty listing is no census: the PTX decides again.
  r.mutable_sass()->Clear();
  EXPECT_THAT(RenderEvalFeedback(r, 1.5), Not(HasSubstr("SASS (")));
  EXPECT_THAT(RenderEvalFeedback(r, 1.5), Not(HasSubstr("Instruction warning")));
}

TEST(feedback_render, TheProfileFollowsTheResourcesAndPrecedesTheSuffix) {
  EvalResult r = PassingResult();
  v1::KernelProfileRun* p = r.mutable_profile();
  p->set_status(v1::PASSED);
  p->set_tool("Nsight Compute 2025.3.1.0");
  (*p->mutable_axes())["M"] = 8192;
  p->set_kernels_profiled(1);
  v1::KernelProfile* k = p->add_kernels();
  k->set_name("gemm");
  k->set_launches(1);
  k->set_duration_us(700);
  const std::string text = RenderEvalFeedback(r, 1.5);
  const size_t profile = text.find("\nProfile (Nsight Compute 2025.3.1.0; workload [M=8192]; 1 "
                                   "kernel profiled):\n  gemm — 700.0 us over 1 launch\n");
  ASSERT_NE(profile, std::string::npos) << text;
  EXPECT_LT(profile, text.find("Kernel is correct."));
  // A profile that failed is said to have failed; the evaluation stands.
  p->set_status(v1::RUNTIME_ERROR);
  p->set_error("CUDA error: an illegal memory access was encountered");
  EXPECT_THAT(RenderEvalFeedback(r, 1.5),
              HasSubstr("RUNTIME_ERROR — the kernel failed under the profiler; no profile.\n"
                        "  CUDA error: an illegal memory access was encountered\n"));
  EXPECT_THAT(RenderEvalFeedback(r, 1.5), HasSubstr("Kernel is correct."));
}

TEST(feedback_render, NoInstructionWarningWithoutCensus) {
  EvalResult r = PassingResult();
  r.clear_ptx();
  EXPECT_THAT(RenderEvalFeedback(r, 1.5), Not(HasSubstr("Instruction warning")));
}

TEST(feedback_render, NoInstructionWarningWhenSomethingFailed) {
  EvalResult r = PassingResult();
  r.mutable_ptx()->mutable_instruction_counts()->clear();
  r.mutable_traces(1)->set_status(v1::INCORRECT_NUMERICAL);
  r.set_status(v1::INCORRECT_NUMERICAL);
  r.set_all_passed(false);
  EXPECT_THAT(RenderEvalFeedback(r, 1.0), Not(HasSubstr("Instruction warning")));
}

TEST(feedback_render, PartialFailureShowsErrorsLogAndFixSuffix) {
  EvalResult r = PassingResult();
  r.set_status(v1::INCORRECT_NUMERICAL);
  r.set_all_passed(false);
  WorkloadTrace* bad = r.mutable_traces(1);
  bad->set_status(v1::INCORRECT_NUMERICAL);
  bad->set_speedup(0);
  bad->set_max_abs_error(0.125);
  bad->set_max_rel_error(3.0);
  bad->set_log("trial 0: 17 of 1024 elements out of tolerance\ntrial 1: same");
  bad->add_errors("first mismatch at [3, 7]: got 1.5, expected 1.375");
  std::string text = RenderEvalFeedback(r, 1.0);
  std::vector<std::string> lines = Lines(text);
  EXPECT_EQ(lines[0], "Evaluation results:");
  EXPECT_EQ(lines[2], "[K=5120, M=16, N=7168] INCORRECT_NUMERICAL");
  EXPECT_EQ(lines[3], "  max_abs_error=1.250e-01, max_rel_error=3.000e+00");
  EXPECT_EQ(lines[4], "  trial 0: 17 of 1024 elements out of tolerance");
  EXPECT_EQ(lines[5], "  trial 1: same");
  EXPECT_EQ(lines[6], "  first mismatch at [3, 7]: got 1.5, expected 1.375");
  EXPECT_EQ(lines.back(), "Please fix the issues and provide an updated kernel.");
  EXPECT_FALSE(TargetMet(r, 0.1));
}

TEST(feedback_render, AllFailedHeaderAndUndefinedErrors) {
  EvalResult r;
  r.set_status(v1::RUNTIME_ERROR);
  WorkloadTrace* t = r.add_traces();
  t->set_workload_uuid("w0");
  t->set_status(v1::RUNTIME_ERROR);
  t->set_log("CUDA error: an illegal memory access was encountered");
  WorkloadTrace* nan = r.add_traces();
  (*nan->mutable_axes())["N"] = 4;
  nan->set_status(v1::INCORRECT_NUMERICAL);
  nan->set_max_abs_error(std::numeric_limits<double>::quiet_NaN());
  nan->set_max_rel_error(std::numeric_limits<double>::infinity());
  std::string text = RenderEvalFeedback(r, 1.0);
  EXPECT_THAT(Lines(text), ElementsAre("Evaluation FAILED:", "[w0] RUNTIME_ERROR",
                                       "  max_abs_error=NaN/Inf, max_rel_error=NaN/Inf",
                                       "  CUDA error: an illegal memory access was encountered",
                                       "[N=4] INCORRECT_NUMERICAL",
                                       "  max_abs_error=NaN/Inf, max_rel_error=NaN/Inf", "",
                                       "Please fix the issues and provide an updated kernel."));
}

TEST(feedback_render, TraceWithoutAxesOrUuidIsNumbered) {
  EvalResult r;
  r.set_status(v1::TIMEOUT);
  r.add_traces()->set_status(v1::TIMEOUT);
  EXPECT_EQ(Lines(RenderEvalFeedback(r, 1.0))[1], "[workload 0] TIMEOUT");
}

TEST(feedback_render, CompileErrorShowsFullCompilerOutput) {
  EvalResult r;
  r.set_status(v1::COMPILE_ERROR);
  r.set_compile_log("kernel.cu(3): error: expected a \";\"\n1 error detected.\n");
  std::string text = RenderEvalFeedback(r, 1.0);
  EXPECT_THAT(
      Lines(text),
      ElementsAre("Evaluation FAILED: COMPILE_ERROR — the kernel did not compile.", "",
                  "Compiler output:", "kernel.cu(3): error: expected a \";\"", "1 error detected.",
                  "", "Please fix the issues and provide an updated kernel."));
  EXPECT_FALSE(TargetMet(r, 0.0));
}

TEST(feedback_render, RuntimeErrorBeforeResultsShowsRunAndBuildOutput) {
  EvalResult r;
  r.set_status(v1::RUNTIME_ERROR);
  r.set_error("Segmentation fault (core dumped)");
  r.set_compile_log("ptxas info    : Used 40 registers");
  std::string text = RenderEvalFeedback(r, 1.0);
  EXPECT_THAT(Lines(text),
              ElementsAre("Evaluation FAILED: RUNTIME_ERROR — the kernel crashed before "
                          "producing results.",
                          "", "Run output:", "Segmentation fault (core dumped)", "",
                          "Compiler output:", "ptxas info    : Used 40 registers", "",
                          "Please fix the issues and provide an updated kernel."));
}

TEST(feedback_render, TimeoutBeforeResults) {
  EvalResult r;
  r.set_status(v1::TIMEOUT);
  r.set_error("killed after 120 s");
  std::string text = RenderEvalFeedback(r, 1.0);
  EXPECT_EQ(Lines(text)[0],
            "Evaluation FAILED: TIMEOUT — the evaluation exceeded its time limit before "
            "producing results.");
  EXPECT_THAT(text, HasSubstr("\nRun output:\nkilled after 120 s\n"));
  EXPECT_EQ(Lines(text).back(), "Please fix the issues and provide an updated kernel.");
}

TEST(feedback_render, LibraryFallbackIsNotAllowed) {
  EvalResult r;
  r.set_status(v1::LIBRARY_FALLBACK);
  r.set_error("cublasGemmEx called from run()");
  std::string text = RenderEvalFeedback(r, 1.0);
  EXPECT_EQ(Lines(text)[0],
            "Evaluation FAILED: LIBRARY_FALLBACK — your kernel calls a vendor library "
            "(cuBLAS/cuDNN/CUTLASS) instead of a hand-written kernel. This is not allowed: "
            "write the kernel yourself.");
  EXPECT_THAT(text, HasSubstr("\nDetails:\ncublasGemmEx called from run()\n"));
  EXPECT_EQ(Lines(text).back(), "Please fix the issues and provide an updated kernel.");
  EXPECT_FALSE(TargetMet(r, 0.0));
}

TEST(feedback_render, CompiledSaysNotRunAndNeverMeetsTarget) {
  EvalResult r;
  r.set_status(v1::COMPILED);
  r.set_min_speedup(5.0);  // must be ignored
  auto* res = r.add_resources();
  res->set_kernel_name("k");
  res->set_registers(32);
  res->set_spill_store_bytes(8);
  res->set_spill_load_bytes(4);
  std::string text = RenderEvalFeedback(r, 1.0);
  EXPECT_THAT(Lines(text),
              ElementsAre("Compilation succeeded: the kernel was built but not run on a GPU "
                          "(compile-only evaluation), so its correctness and speed are "
                          "unknown.",
                          "", "Resources (ptxas):",
                          "  k: 32 registers, 0 bytes smem, 0 bytes stack, 8 bytes spill "
                          "stores, 4 bytes spill loads",
                          "", "Compile-only evaluation: correctness and speed were not measured."));
  EXPECT_THAT(text, Not(HasSubstr("Please fix")));
  EXPECT_FALSE(TargetMet(r, 1.0));
}

TEST(feedback_render, SimulatedBannerIsTheFirstLine) {
  EvalResult r = PassingResult();
  r.set_simulated(true);
  std::vector<std::string> lines = Lines(RenderEvalFeedback(r, 1.0));
  EXPECT_EQ(lines[0], "[SIMULATED RESULT — not a real measurement]");
  EXPECT_EQ(lines[1], "Evaluation results:");

  EvalResult c;
  c.set_status(v1::COMPILE_ERROR);
  c.set_simulated(true);
  EXPECT_EQ(Lines(RenderEvalFeedback(c, 1.0))[0], "[SIMULATED RESULT — not a real measurement]");
}

TEST(feedback_render, NoTracesForAPassedStatusIsAFailure) {
  EvalResult r;
  r.set_status(v1::PASSED);
  r.set_all_passed(true);
  r.set_min_speedup(3.0);
  std::string text = RenderEvalFeedback(r, 1.0);
  EXPECT_EQ(Lines(text)[0], "Evaluation FAILED: PASSED — no workload results were produced.");
  EXPECT_EQ(Lines(text).back(), "Please fix the issues and provide an updated kernel.");
  EXPECT_FALSE(TargetMet(r, 1.0));
}

TEST(feedback_no_code, NamesTheFenceOfTheLanguage) {
  EXPECT_EQ(RenderNoCodeFeedback("cuda"),
            "No ```cpp code block could be extracted from your answer. Please provide the "
            "complete kernel in a single ```cpp block.");
  EXPECT_EQ(RenderNoCodeFeedback("ptx"),
            "No ```ptx code block could be extracted from your answer. Please provide the "
            "complete kernel in a single ```ptx block.");
  EXPECT_EQ(RenderNoCodeFeedback("triton"),
            "No ```python code block could be extracted from your answer. Please provide the "
            "complete kernel in a single ```python block.");
}

TEST(feedback_target_met, RequiresEveryTracePassed) {
  EvalResult r = PassingResult();
  r.mutable_traces(0)->set_status(v1::TIMEOUT);  // inconsistent all_passed flag
  EXPECT_FALSE(TargetMet(r, 1.0));
}

}  // namespace
}  // namespace ptxbench::scheduler
