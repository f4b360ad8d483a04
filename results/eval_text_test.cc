#include "results/eval_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ptxbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

v1::KernelProfile Kernel(const std::string& name, double us) {
  v1::KernelProfile k;
  k.set_name(name);
  k.set_launches(1);
  k.set_duration_us(us);
  k.set_sm_throughput_pct(41.25);
  k.set_memory_throughput_pct(78.5);
  k.set_dram_throughput_pct(60.1);
  k.set_tensor_pipe_pct(-1);  // not measured
  k.set_achieved_occupancy_pct(45.1);
  k.set_theoretical_occupancy_pct(50);
  k.set_occupancy_limiter("registers");
  k.set_registers_per_thread(128);
  k.set_shared_memory_per_block_bytes(49152);
  k.set_block_size(256);
  k.set_grid_size(1024);
  k.set_l1_hit_rate_pct(12.3);
  k.set_l2_hit_rate_pct(80.2);
  auto* s = k.add_stalls();
  s->set_reason("long_scoreboard");
  s->set_cycles_per_instruction(12.4);
  s = k.add_stalls();
  s->set_reason("barrier");
  s->set_cycles_per_instruction(3.1);
  return k;
}

v1::KernelProfileRun ProfileRun(int kernels) {
  v1::KernelProfileRun run;
  run.set_status(v1::PASSED);
  run.set_tool("Nsight Compute 2025.3.1.0");
  (*run.mutable_axes())["M"] = 8192;
  (*run.mutable_axes())["N"] = 7168;
  (*run.mutable_axes())["K"] = 5120;
  for (int i = 0; i < kernels; ++i) {
    *run.add_kernels() = Kernel("gemm_kernel_" + std::to_string(i), 812.34 - i);
  }
  run.set_kernels_profiled(kernels);
  return run;
}

TEST(EvalTextTest, AProfileHasOneStableBlockPerKernel) {
  EXPECT_EQ(RenderProfile(ProfileRun(1)),
            "Profile (Nsight Compute 2025.3.1.0; workload [K=5120, M=8192, N=7168]; 1 kernel "
            "profiled):\n"
            "  gemm_kernel_0 — 812.3 us over 1 launch; grid 1024, block 256\n"
            "    throughput of peak: SM 41.2%, memory 78.5%, DRAM 60.1%\n"
            "    occupancy: 45.1% achieved of 50.0% theoretical (limited by registers), 128 "
            "registers/thread, 48.0 KiB shared memory/block\n"
            "    cache hit rates: L1 12.3%, L2 80.2%\n"
            "    top stalls (cycles per instruction): long_scoreboard 12.40, barrier 3.10\n");
}

TEST(EvalTextTest, OnlyTheLongestKernelsAreShownAndTheSectionStaysShort) {
  const std::string text = RenderProfile(ProfileRun(8));
  EXPECT_THAT(text, HasSubstr("8 kernels profiled, the 3 longest shown"));
  EXPECT_THAT(text, HasSubstr("gemm_kernel_2"));
  EXPECT_THAT(text, Not(HasSubstr("gemm_kernel_3")));
  // docs/FORMATS.md promises at most about 400 tokens (4 characters each)
  // for the section, kernel names of up to 200 characters included.
  v1::KernelProfileRun long_names = ProfileRun(8);
  for (auto& k : *long_names.mutable_kernels()) k.set_name(std::string(500, 'k'));
  EXPECT_LE(RenderProfile(long_names).size(), 1600u + 3 * 200);
  EXPECT_LE(text.size(), 1600u);
}

TEST(EvalTextTest, AFailedProfileSaysWhoseFaultItIsAndShowsTheCleanedError) {
  v1::KernelProfileRun run = ProfileRun(0);
  run.set_status(v1::RUNTIME_ERROR);
  run.set_error("an illegal memory access\x1b[2J\nline 2\n");
  const std::string text = RenderProfile(run);
  EXPECT_THAT(text, HasSubstr("): RUNTIME_ERROR — the kernel failed under the profiler; no "
                              "profile.\n  an illegal memory access?[2J\n  line 2\n"));
  run.set_status(v1::INFRA_ERROR);
  EXPECT_THAT(RenderProfile(run), HasSubstr("the profiler failed (not the kernel's fault)"));
  run.set_status(v1::TIMEOUT);
  EXPECT_THAT(RenderProfile(run), HasSubstr("ran past the profile's deadline"));
}

TEST(EvalTextTest, ASimulatedProfileSaysSoFirstAndKernelNamesArePrintable) {
  v1::KernelProfileRun run = ProfileRun(1);
  run.set_simulated(true);
  run.mutable_kernels(0)->set_name("evil\x1b]0;title\x07\xc3\xa9");
  const std::string text = RenderProfile(run);
  EXPECT_EQ(text.rfind("[SIMULATED PROFILE — not a measurement]\n", 0), 0u);
  EXPECT_THAT(text, HasSubstr("  evil?]0;title??? — "));
}

TEST(EvalTextTest, TheSassCensusNamesItsFamiliesAndLocalMemory) {
  v1::SassCensus sass;
  EXPECT_EQ(RenderSassCensus(sass), "");
  sass.set_instructions(1234);
  (*sass.mutable_instruction_counts())["UTMALDG"] = 8;
  (*sass.mutable_instruction_counts())["HGMMA"] = 64;
  EXPECT_EQ(RenderSassCensus(sass),
            "SASS (cuobjdump): 1234 instructions; HGMMA 64, UTMALDG 8; no local-memory loads or "
            "stores.\n");
  (*sass.mutable_instruction_counts())["STL"] = 4;
  (*sass.mutable_instruction_counts())["LDL"] = 6;
  EXPECT_THAT(RenderSassCensus(sass),
              HasSubstr("; local memory (spills or stack arrays): LDL 6, STL 4.\n"));
  sass.clear_instruction_counts();
  EXPECT_THAT(RenderSassCensus(sass), HasSubstr("none of the tensor-core, TMA or async-copy"));
}

TEST(EvalTextTest, AKernelNameIsShortenedToItsQualifiedName) {
  EXPECT_EQ(ShortKernelName("void ns::gemm<128, float, Traits<4>>(ns::Params, int*)"),
            "ns::gemm<...>");
  EXPECT_EQ(ShortKernelName("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_cublas"),
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_cublas");
  EXPECT_EQ(ShortKernelName("k<<<<"), "k<...>");  // unbalanced: cut at the first
  EXPECT_EQ(ShortKernelName("a>b"), "a>b");
  EXPECT_EQ(ShortKernelName(""), "?");
  EXPECT_EQ(ShortKernelName("(x)"), "?");
  EXPECT_EQ(ShortKernelName("t\xc3\xa9\x1b"), "t???");
  EXPECT_EQ(ShortKernelName(std::string(100, 'k') + "_cublas"),
            std::string(56, 'k') + "..." + std::string(14, 'k') + "_cublas");
}

TEST(EvalTextTest, ACensusListsItsFirstKernelsAndSaysWhatItMissed) {
  v1::KernelCensus census;
  EXPECT_EQ(RenderKernelCensus(census, "  "), "");
  for (int i = 0; i < 6; ++i) {
    v1::LaunchedKernel* k = census.add_kernels();
    k->set_name("k" + std::to_string(i));
    k->set_origin(i == 0 ? v1::SUBMISSION : v1::MEMORY);
    k->set_launches(i + 1);
    k->set_ms_per_call(0.5);
  }
  census.set_calls_seen(3);
  census.set_calls_timed(3);
  census.set_unaccounted_ms_per_call(0.25);
  EXPECT_EQ(RenderKernelCensus(census, "  "),
            "  kernels that ran (per timed call): k0 (submission) 0.5000 ms, 1 launch; k1 "
            "(memory) 0.5000 ms, 2 launches; k2 (memory) 0.5000 ms, 3 launches; k3 (memory) "
            "0.5000 ms, 4 launches; +2 more, 1.0000 ms; not accounted for 0.2500 ms\n");
  EXPECT_EQ(CensusKernelNames(census, v1::MEMORY, 2), "k1, k2 and 3 more");
  EXPECT_EQ(CensusKernelNames(census, v1::LIBRARY), "");
  census.set_calls_seen(2);
  EXPECT_THAT(RenderKernelCensus(census, ""),
              HasSubstr("\ncensus incomplete: not every timed call was seen (2 of 3 timed calls "
                        "seen)\n"));
}

}  // namespace
}  // namespace ptxbench
