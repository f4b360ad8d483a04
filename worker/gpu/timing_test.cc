#include "worker/gpu/timing.h"

#include <gtest/gtest.h>

#include "worker/gpu/gpu_test_util.h"

namespace ptxbench::gpu {
namespace {

// A callable that does measurable work: a 64 MiB device-to-device copy.
class CopyWork {
 public:
  CopyWork() {
    cudaMalloc(&src_, kBytes);
    cudaMalloc(&dst_, kBytes);
  }
  ~CopyWork() {
    cudaFree(src_);
    cudaFree(dst_);
  }
  absl::Status operator()(cudaStream_t stream, int call_index) {
    calls_.push_back(call_index);
    return CudaStatus(cudaMemcpyAsync(dst_, src_, kBytes, cudaMemcpyDeviceToDevice, stream),
                      "cudaMemcpyAsync");
  }
  const std::vector<int>& calls() const { return calls_; }

 private:
  static constexpr size_t kBytes = size_t{64} << 20;
  void* src_ = nullptr;
  void* dst_ = nullptr;
  std::vector<int> calls_;
};

TEST(TimingTest, FiftyTimedSamplesAfterTenWarmUpsWithPositiveMedian) {
  PTXB_REQUIRE_GPU();
  auto flusher = L2Flusher::Create();
  ASSERT_TRUE(flusher.ok()) << flusher.status();
  int l2 = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0), cudaSuccess);
  EXPECT_GE((*flusher)->scratch_bytes(), 2 * static_cast<size_t>(l2));

  CopyWork work;
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  auto result =
      TimeCalls([&](cudaStream_t s, int i) { return work(s, i); }, stream, flusher->get());
  cudaStreamDestroy(stream);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->samples_ms.size(), 50u);
  EXPECT_EQ(result->stats.count, 50);
  EXPECT_GT(result->stats.median, 0.0);
  EXPECT_GT(result->stats.min, 0.0);
  EXPECT_LE(result->stats.min, result->stats.median);
  // Every call, warm-up included, saw its index in order.
  ASSERT_EQ(work.calls().size(), 60u);
  for (int i = 0; i < 60; ++i) EXPECT_EQ(work.calls()[i], i);
}

TEST(TimingTest, CallableErrorAbortsTheMeasurement) {
  PTXB_REQUIRE_GPU();
  int calls = 0;
  auto result = TimeCalls(
      [&](cudaStream_t, int i) {
        ++calls;
        return i == 3 ? absl::DataLossError("planted") : absl::OkStatus();
      },
      nullptr, nullptr, TimingOptions{.warmup_calls = 10, .timed_calls = 50, .cold_l2 = false});
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(calls, 4);
}

TEST(TimingTest, ColdL2WithoutFlusherIsInvalidArgument) {
  PTXB_REQUIRE_GPU();
  auto result = TimeCalls([](cudaStream_t, int) { return absl::OkStatus(); }, nullptr, nullptr);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ptxbench::gpu
