// gemm_timing_bench: times the cuBLAS reference of gemm_n7168_k5120 with the
// method of docs/MEASUREMENT.md ("Timing") (cold L2, 10 warm-up + 50 timed
// calls, 3 rotating input sets) for each workload M, and the spread of the
// M=8192 median over repeated measurements. Prints a markdown table. With
// --ncu_m it only runs a few flushed GEMM launches, for `ncu` to time the same
// kernel.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "worker/gpu/device_info.h"
#include "worker/gpu/sample_stats.h"
#include "worker/gpu/timing.h"
#include "workloads/reference/device_buffer.h"
#include "workloads/reference/gemm_reference.h"
#include "workloads/reference/random.h"
#include "workloads/reference/testing/fill_nan.h"

ABSL_FLAG(std::vector<std::string>, m,
          std::vector<std::string>({"70", "232", "972", "2379", "8192"}), "workload M values");
ABSL_FLAG(int, repeats, 10, "how often the largest M is measured again, for the spread");
ABSL_FLAG(int, preheat_ms, 0,
          "before each measurement, run the GEMM back to back for this long, so every "
          "measurement starts from the card's sustained clock and power state");
ABSL_FLAG(int, gap_us, 0, "host-side pause after each timed call, microseconds");
ABSL_FLAG(int, ncu_m, 0, "if > 0: only run --ncu_calls flushed GEMM launches at this M");
ABSL_FLAG(int, ncu_calls, 5, "GEMM launches in --ncu_m mode");

namespace ptxbench {
namespace {

using reference::DeviceBuffer;
constexpr int kN = 7168, kK = 5120, kSets = 3;

// kSets input sets (A, B) and outputs for one M, filled from seeds.
struct GemmSets {
  int m = 0;
  std::vector<DeviceBuffer<__nv_bfloat16>> a, b, c;

  static absl::StatusOr<GemmSets> Make(int m, uint64_t seed) {
    GemmSets s;
    s.m = m;
    for (int i = 0; i < kSets; ++i) {
      PTXB_ASSIGN_OR_RETURN(auto a, DeviceBuffer<__nv_bfloat16>::Allocate(int64_t{m} * kK));
      PTXB_ASSIGN_OR_RETURN(auto b, DeviceBuffer<__nv_bfloat16>::Allocate(int64_t{kN} * kK));
      PTXB_ASSIGN_OR_RETURN(auto c, DeviceBuffer<__nv_bfloat16>::Allocate(int64_t{m} * kN));
      PTXB_RETURN_IF_ERROR(reference::FillStandardNormal(a.get(), a.size(), seed + 2 * i, nullptr));
      PTXB_RETURN_IF_ERROR(
          reference::FillStandardNormal(b.get(), b.size(), seed + 2 * i + 1, nullptr));
      PTXB_RETURN_IF_ERROR(reference::testing::FillNaN(c.get(), c.size(), nullptr));
      s.a.push_back(std::move(a));
      s.b.push_back(std::move(b));
      s.c.push_back(std::move(c));
    }
    PTXB_RETURN_IF_ERROR(gpu::CudaStatus(cudaDeviceSynchronize(), "filling inputs"));
    return s;
  }
};

double Tflops(int m, double ms) { return 2.0 * m * kN * kK / (ms * 1e-3) / 1e12; }

gpu::TimingOptions Options() {
  gpu::TimingOptions options;
  options.idle_between_calls = absl::Microseconds(absl::GetFlag(FLAGS_gap_us));
  return options;
}

absl::StatusOr<gpu::TimingResult> TimeGemm(reference::CublasGemm& gemm, GemmSets& sets,
                                           cudaStream_t stream, gpu::L2Flusher& flusher) {
  return gpu::TimeCalls(
      [&](cudaStream_t s, int i) {
        const int k = i % kSets;
        return gemm.Run(sets.a[k].get(), sets.b[k].get(), sets.c[k].get(), sets.m, kN, kK, s);
      },
      stream, &flusher, Options());
}

// Back-to-back GEMMs (no L2 flush) for --preheat_ms of host time.
absl::Status Preheat(reference::CublasGemm& gemm, GemmSets& sets, cudaStream_t stream) {
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(absl::GetFlag(FLAGS_preheat_ms));
  for (int i = 0; std::chrono::steady_clock::now() < until; ++i) {
    const int k = i % kSets;
    PTXB_RETURN_IF_ERROR(
        gemm.Run(sets.a[k].get(), sets.b[k].get(), sets.c[k].get(), sets.m, kN, kK, stream));
    // Keep the queue short so the loop's length tracks GPU time.
    if (i % 4 == 3) PTXB_RETURN_IF_ERROR(gpu::CudaStatus(cudaStreamSynchronize(stream), "preheat"));
  }
  return gpu::CudaStatus(cudaDeviceSynchronize(), "preheat");
}

absl::Status NcuMode(reference::CublasGemm& gemm, cudaStream_t stream, gpu::L2Flusher& flusher) {
  const int m = absl::GetFlag(FLAGS_ncu_m);
  PTXB_ASSIGN_OR_RETURN(GemmSets sets, GemmSets::Make(m, 1000));
  for (int i = 0; i < absl::GetFlag(FLAGS_ncu_calls); ++i) {
    PTXB_RETURN_IF_ERROR(flusher.Flush(stream));
    PTXB_RETURN_IF_ERROR(gpu::CudaStatus(cudaDeviceSynchronize(), "sync"));
    const int k = i % kSets;
    PTXB_RETURN_IF_ERROR(
        gemm.Run(sets.a[k].get(), sets.b[k].get(), sets.c[k].get(), m, kN, kK, stream));
    PTXB_RETURN_IF_ERROR(gpu::CudaStatus(cudaDeviceSynchronize(), "sync"));
  }
  std::printf("ncu mode: %d flushed cuBLAS GEMM launches at M=%d done\n",
              absl::GetFlag(FLAGS_ncu_calls), m);
  return absl::OkStatus();
}

absl::Status Run() {
  PTXB_ASSIGN_OR_RETURN(gpu::GpuInventory inv, gpu::DiscoverGpus());
  if (inv.gpus.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("no CUDA GPU: ", inv.why_none));
  }
  const gpu::GpuInfo& g = inv.gpus[0];
  std::printf("GPU 0: %s, %s, %d SMs, L2 %.1f MiB, %.1f GiB\n", g.name.c_str(), g.sm_arch.c_str(),
              g.sm_count, g.l2_cache_bytes / 1048576.0, g.total_memory_bytes / 1073741824.0);
  PTXB_RETURN_IF_ERROR(gpu::CudaStatus(cudaSetDevice(0), "cudaSetDevice"));
  PTXB_ASSIGN_OR_RETURN(auto flusher, gpu::L2Flusher::Create());
  PTXB_ASSIGN_OR_RETURN(auto gemm, reference::CublasGemm::Create());
  cudaStream_t stream;
  PTXB_RETURN_IF_ERROR(gpu::CudaStatus(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
                                       "cudaStreamCreate"));
  if (absl::GetFlag(FLAGS_ncu_m) > 0) return NcuMode(*gemm, stream, *flusher);

  std::vector<int> ms;
  for (const std::string& s : absl::GetFlag(FLAGS_m)) ms.push_back(std::stoi(s));
  std::printf(
      "\ncuBLAS bf16 GEMM C[M,7168] = A[M,5120]·B[7168,5120]^T; cold L2 (%.0f MiB "
      "scratch), 10 warm-up + 50 timed calls, 3 rotating input sets; span per call from CUPTI "
      "activity records where available (the method column says); preheat %d ms\n\n",
      flusher->scratch_bytes() / 1048576.0, absl::GetFlag(FLAGS_preheat_ms));
  std::printf("| M | median ms | mean ms | min ms | max ms | CV of 50 | TFLOP/s (median) | method |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---|\n");
  for (int m : ms) {
    PTXB_ASSIGN_OR_RETURN(GemmSets sets, GemmSets::Make(m, 100 + m));
    PTXB_RETURN_IF_ERROR(Preheat(*gemm, sets, stream));
    PTXB_ASSIGN_OR_RETURN(gpu::TimingResult r, TimeGemm(*gemm, sets, stream, *flusher));
    std::printf("| %d | %.4f | %.4f | %.4f | %.4f | %.2f%% | %.1f | %s |\n", m, r.stats.median,
                r.stats.mean, r.stats.min, r.stats.max, 100 * r.stats.cv,
                Tflops(m, r.stats.median), r.method.c_str());
    std::fflush(stdout);
  }

  const int big = ms.back();
  const int repeats = absl::GetFlag(FLAGS_repeats);
  std::vector<double> medians;
  std::printf("\nM=%d repeated %d times (fresh seeded inputs each time):\n\n", big, repeats);
  std::printf("| repeat | median ms | min ms | max ms | CV of 50 | TFLOP/s |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|\n");
  for (int rep = 0; rep < repeats; ++rep) {
    PTXB_ASSIGN_OR_RETURN(GemmSets sets, GemmSets::Make(big, 5000 + 10 * rep));
    PTXB_RETURN_IF_ERROR(Preheat(*gemm, sets, stream));
    PTXB_ASSIGN_OR_RETURN(gpu::TimingResult r, TimeGemm(*gemm, sets, stream, *flusher));
    medians.push_back(r.stats.median);
    std::printf("| %d | %.4f | %.4f | %.4f | %.2f%% | %.1f |\n", rep, r.stats.median, r.stats.min,
                r.stats.max, 100 * r.stats.cv, Tflops(big, r.stats.median));
  }
  gpu::SampleStats spread = gpu::Summarize(medians);
  std::printf("\n| M | repeats | mean of medians ms | stdev ms | CV | TFLOP/s (mean) |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|\n");
  std::printf("| %d | %d | %.4f | %.5f | %.3f%% | %.1f |\n", big, repeats, spread.mean,
              spread.stdev, 100 * spread.cv, Tflops(big, spread.mean));
  cudaStreamDestroy(stream);
  return absl::OkStatus();
}

}  // namespace
}  // namespace ptxbench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::Status s = ptxbench::Run();
  if (!s.ok()) {
    std::fprintf(stderr, "gemm_timing_bench: %s\n", std::string(s.ToString()).c_str());
    return 1;
  }
  return 0;
}
