#include "worker/gpu/timing.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "testing/require_gpu.h"
#include "worker/gpu/cupti_span.h"

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

// A kernel that spins for a given number of nanoseconds of %globaltimer, so
// its duration does not depend on the SM clock. Loaded from PTX through the
// runtime, since this file is not compiled by nvcc.
class SpinKernel {
 public:
  SpinKernel() {
    static constexpr char kPtx[] = R"(
.version 7.0
.target sm_50
.address_size 64
.visible .entry spin_ns(.param .u64 ns)
{
  .reg .pred %p;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [ns];
  mov.u64 %rd2, %globaltimer;
$Lspin:
  mov.u64 %rd3, %globaltimer;
  sub.u64 %rd4, %rd3, %rd2;
  setp.lt.u64 %p, %rd4, %rd1;
  @%p bra $Lspin;
  ret;
}
)";
    status_ =
        CudaStatus(cudaLibraryLoadData(&library_, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0),
                   "cudaLibraryLoadData(spin)");
    if (status_.ok()) {
      status_ = CudaStatus(cudaLibraryGetKernel(&kernel_, library_, "spin_ns"),
                           "cudaLibraryGetKernel(spin_ns)");
    }
    // One launch here, so module loading is not part of any measured call.
    if (status_.ok()) status_ = Launch(nullptr, 0.001);
    if (status_.ok()) status_ = CudaStatus(cudaDeviceSynchronize(), "spin warm-up");
  }
  ~SpinKernel() {
    if (library_ != nullptr) cudaLibraryUnload(library_);
  }
  const absl::Status& status() const { return status_; }

  // One thread that spins for `ms` milliseconds.
  absl::Status Launch(cudaStream_t stream, double ms) {
    uint64_t ns = static_cast<uint64_t>(ms * 1e6);
    void* args[] = {&ns};
    return CudaStatus(
        cudaLaunchKernel(reinterpret_cast<const void*>(kernel_), dim3(1), dim3(1), args, 0, stream),
        "cudaLaunchKernel(spin_ns)");
  }

 private:
  absl::Status status_;
  cudaLibrary_t library_ = nullptr;
  cudaKernel_t kernel_ = nullptr;
};

// What every CUPTI test needs: a stream, a flusher, the spin kernel.
class CuptiTimingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PTXB_REQUIRE_GPU();
    // CUPTI ships with the CUDA toolkit; a GPU machine without it (or one
    // running under ncu/nsys) fails here with the reason.
    auto recorder = CuptiSpanRecorder::Get();
    ASSERT_TRUE(recorder.ok()) << recorder.status();
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking), cudaSuccess);
    auto flusher = L2Flusher::Create();
    ASSERT_TRUE(flusher.ok()) << flusher.status();
    flusher_ = std::move(flusher).value();
    spin_ = std::make_unique<SpinKernel>();
    ASSERT_TRUE(spin_->status().ok()) << spin_->status();
  }
  void TearDown() override {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
    if (side_ != nullptr) cudaStreamDestroy(side_);
  }
  static TimingOptions Options(SpanMethod method) {
    return TimingOptions{.method = method, .warmup_calls = 2, .timed_calls = 10};
  }

  cudaStream_t stream_ = nullptr;
  cudaStream_t side_ = nullptr;
  std::unique_ptr<L2Flusher> flusher_;
  std::unique_ptr<SpinKernel> spin_;
};

TEST_F(CuptiTimingTest, CuptiSpanCoversAKernelOnAnUnjoinedSecondStream) {
  // 2 ms on a second stream that the call never joins back, 0.01 ms on the
  // given stream.
  auto call = [&](cudaStream_t s, int) -> absl::Status {
    PTXB_RETURN_IF_ERROR(spin_->Launch(side_, 2.0));
    return spin_->Launch(s, 0.01);
  };
  auto cupti = TimeCalls(call, stream_, flusher_.get(), Options(SpanMethod::kCupti));
  ASSERT_TRUE(cupti.ok()) << cupti.status();
  EXPECT_EQ(cupti->method, "cupti");
  EXPECT_GE(cupti->stats.min, 1.99);
  EXPECT_LT(cupti->stats.max, 2.5);
  RecordProperty("cupti_median_ms", absl::StrCat(cupti->stats.median));
  // The fallback's documented limit: its events see the given stream only.
  auto events = TimeCalls(call, stream_, flusher_.get(), Options(SpanMethod::kEvents));
  ASSERT_TRUE(events.ok()) << events.status();
  EXPECT_EQ(events->method, "events");
  EXPECT_LT(events->stats.median, 1.0);
  RecordProperty("events_median_ms", absl::StrCat(events->stats.median));
}

TEST_F(CuptiTimingTest, CuptiAndEventsAgreeOnASingleStreamKernel) {
  auto call = [&](cudaStream_t s, int) { return spin_->Launch(s, 1.0); };
  TimingOptions options = Options(SpanMethod::kCupti);
  options.timed_calls = 20;
  auto cupti = TimeCalls(call, stream_, flusher_.get(), options);
  ASSERT_TRUE(cupti.ok()) << cupti.status();
  options.method = SpanMethod::kEvents;
  auto events = TimeCalls(call, stream_, flusher_.get(), options);
  ASSERT_TRUE(events.ok()) << events.status();
  EXPECT_GE(cupti->stats.median, 0.999);
  EXPECT_LT(cupti->stats.median, 1.05);
  EXPECT_NEAR(cupti->stats.median, events->stats.median, 0.03 * events->stats.median)
      << "cupti " << cupti->stats.median << " ms, events " << events->stats.median << " ms";
  RecordProperty("cupti_median_ms", absl::StrCat(cupti->stats.median));
  RecordProperty("events_median_ms", absl::StrCat(events->stats.median));
}

TEST_F(CuptiTimingTest, FlushAndHookWorkAreOutsideTheCuptiSpan) {
  auto call = [&](cudaStream_t s, int) { return spin_->Launch(s, 0.1); };
  auto plain = TimeCalls(call, stream_, flusher_.get(), Options(SpanMethod::kCupti));
  ASSERT_TRUE(plain.ok()) << plain.status();
  // The flush alone (a 2x L2 memset, ~40 us on an H200) would add far more.
  EXPECT_LT(plain->stats.median, 0.115);

  TimingHooks hooks;
  hooks.before = [&](cudaStream_t s, int) { return spin_->Launch(s, 2.0); };
  hooks.after = [&](int) -> absl::Status {
    PTXB_RETURN_IF_ERROR(spin_->Launch(side_, 2.0));
    return CudaStatus(cudaStreamSynchronize(side_), "after hook");
  };
  auto hooked = TimeCalls(call, stream_, flusher_.get(), Options(SpanMethod::kCupti), hooks);
  ASSERT_TRUE(hooked.ok()) << hooked.status();
  EXPECT_NEAR(hooked->stats.median, plain->stats.median, 0.01)
      << "with 2 ms hooks " << hooked->stats.median << " ms, without " << plain->stats.median;
  RecordProperty("plain_median_ms", absl::StrCat(plain->stats.median));
  RecordProperty("hooked_median_ms", absl::StrCat(hooked->stats.median));
}

TEST_F(CuptiTimingTest, HooksRunAroundEveryCallWithItsIndex) {
  std::vector<std::string> log;
  TimingHooks hooks;
  hooks.before = [&](cudaStream_t s, int i) {
    log.push_back(absl::StrCat("before ", i, s == stream_ ? "" : " (wrong stream)"));
    return absl::OkStatus();
  };
  hooks.after = [&](int i) {
    log.push_back(absl::StrCat("after ", i));
    return absl::OkStatus();
  };
  // The call launches no GPU work: its CUPTI span is 0.
  auto result = TimeCalls(
      [&](cudaStream_t, int i) {
        log.push_back(absl::StrCat("call ", i));
        return absl::OkStatus();
      },
      stream_, flusher_.get(), Options(SpanMethod::kCupti), hooks);
  ASSERT_TRUE(result.ok()) << result.status();
  std::vector<std::string> want;
  for (int i = 0; i < 12; ++i) {
    want.push_back(absl::StrCat("before ", i));
    want.push_back(absl::StrCat("call ", i));
    want.push_back(absl::StrCat("after ", i));
  }
  EXPECT_EQ(log, want);
  for (double ms : result->samples_ms) EXPECT_EQ(ms, 0.0);
}

TEST_F(CuptiTimingTest, HookErrorAbortsTheMeasurement) {
  int calls = 0;
  TimingHooks hooks;
  hooks.after = [](int i) {
    return i == 2 ? absl::DataLossError("output check failed") : absl::OkStatus();
  };
  auto result = TimeCalls(
      [&](cudaStream_t, int) {
        ++calls;
        return absl::OkStatus();
      },
      stream_, flusher_.get(), Options(SpanMethod::kAuto), hooks);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(calls, 3);
}

TEST_F(CuptiTimingTest, EventsMethodStillTimesTheGivenStream) {
  auto result = TimeCalls([&](cudaStream_t s, int) { return spin_->Launch(s, 0.5); }, stream_,
                          flusher_.get(), Options(SpanMethod::kEvents));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->method, "events");
  EXPECT_EQ(result->fallback_reason, "");
  EXPECT_EQ(result->samples_ms.size(), 10u);
  EXPECT_GE(result->stats.min, 0.499);
  EXPECT_LT(result->stats.median, 0.6);
}

// The recorder counts the call's work from any host thread and nothing
// launched before BeginCall or after EndCall.
TEST_F(CuptiTimingTest, RecorderTakesTheCallsWorkFromAnyThreadAndOnlyThat) {
  CuptiSpanRecorder* recorder = *CuptiSpanRecorder::Get();
  void* buf = nullptr;
  ASSERT_EQ(cudaMalloc(&buf, 2 << 20), cudaSuccess);

  // Before the call, not counted. The copy also pays here for whatever a
  // process's first device-to-device copy costs: on an H200 this test's span
  // was 2.3-2.9 ms instead of ~0.2 ms whenever it ran first in the process,
  // and the CUPTI span rightly holds host gaps between a call's launches.
  ASSERT_EQ(cudaMemsetAsync(buf, 1, 1 << 20, stream_), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(static_cast<char*>(buf) + (1 << 20), buf, 1 << 20,
                            cudaMemcpyDeviceToDevice, stream_),
            cudaSuccess);
  ASSERT_TRUE(spin_->Launch(stream_, 0.5).ok());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  recorder->BeginCall();
  absl::Status from_thread;
  std::thread t([&] {
    from_thread = spin_->Launch(side_, 0.2);
    if (from_thread.ok()) {
      from_thread = CudaStatus(cudaMemcpyAsync(static_cast<char*>(buf) + (1 << 20), buf, 1 << 20,
                                               cudaMemcpyDeviceToDevice, side_),
                               "cudaMemcpyAsync");
    }
  });
  t.join();
  ASSERT_TRUE(from_thread.ok()) << from_thread;
  // After the join, so no host gap (a new thread's first CUDA call can take
  // milliseconds) lies between the call's activities.
  ASSERT_EQ(cudaMemsetAsync(buf, 2, 1 << 20, stream_), cudaSuccess);
  recorder->EndCall();
  ASSERT_TRUE(spin_->Launch(stream_, 5.0).ok());  // after: not counted
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto span = recorder->CollectSpan();
  cudaFree(buf);
  ASSERT_TRUE(span.ok()) << span.status();
  EXPECT_EQ(span->activities, 3);  // the memset, the kernel, the copy
  EXPECT_GE(absl::ToDoubleMilliseconds(span->span), 0.2);
  EXPECT_LT(absl::ToDoubleMilliseconds(span->span), 4.0);  // the 5 ms kernel after is out
  RecordProperty("span_ms", absl::StrCat(absl::ToDoubleMilliseconds(span->span)));
  // The sequence is over: a second collect has no call to collect.
  EXPECT_EQ(recorder->CollectSpan().status().code(), absl::StatusCode::kFailedPrecondition);
}

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
  // kAuto picks CUPTI on a GPU machine with the toolkit's libcupti.
  EXPECT_EQ(result->method, "cupti") << result->fallback_reason;
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
