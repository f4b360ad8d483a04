// GPU tests of the runner's device-side checks (skip without a GPU).
#include "worker/runner/measure/checks.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "common/status_macros.h"
#include "testing/require_gpu.h"
#include "workloads/reference/device_buffer.h"

namespace ptxbench::runner {
namespace {

using reference::DeviceBuffer;

// A value read back from device memory once `stream` finished.
template <typename T>
absl::StatusOr<T> ReadBack(const DeviceBuffer<T>& device, cudaStream_t stream) {
  T value{};
  cudaError_t err = cudaMemcpyAsync(&value, device.get(), sizeof(T), cudaMemcpyDeviceToHost, stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  if (err != cudaSuccess) return absl::InternalError(cudaGetErrorString(err));
  return value;
}

// EnqueueCompare, waited for and read back: the harness's check as one call.
absl::StatusOr<reference::CompareResult> CompareOnGpu(const void* actual, const void* expected,
                                                      ptxb::DType type, int64_t count,
                                                      const reference::Tolerance& tol,
                                                      cudaStream_t stream) {
  PTXB_ASSIGN_OR_RETURN(auto counters, DeviceBuffer<CompareCounters>::Allocate(1));
  PTXB_RETURN_IF_ERROR(EnqueueCompare(actual, expected, type, count, tol, counters.get(), stream));
  PTXB_ASSIGN_OR_RETURN(CompareCounters c, ReadBack(counters, stream));
  return CompareResultOf(c, count, tol);
}

// EnqueueCountChangedBytes, waited for and read back.
absl::StatusOr<int64_t> CountChangedBytes(const void* a, const void* b, int64_t bytes,
                                          cudaStream_t stream) {
  PTXB_ASSIGN_OR_RETURN(auto changed, DeviceBuffer<unsigned long long>::Allocate(1));
  PTXB_RETURN_IF_ERROR(EnqueueCountChangedBytes(a, b, bytes, changed.get(), stream));
  PTXB_ASSIGN_OR_RETURN(unsigned long long n, ReadBack(changed, stream));
  return static_cast<int64_t>(n);
}

template <typename T>
DeviceBuffer<T> Upload(const std::vector<float>& values) {
  std::vector<T> host;
  for (float v : values) host.push_back(static_cast<T>(v));
  auto buffer = DeviceBuffer<T>::Allocate(host.size());
  EXPECT_TRUE(buffer.ok());
  cudaMemcpy(buffer->get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
  return *std::move(buffer);
}

reference::CompareResult Compare(const std::vector<float>& actual,
                                 const std::vector<float>& expected) {
  auto a = Upload<__nv_bfloat16>(actual);
  auto e = Upload<__nv_bfloat16>(expected);
  auto r = CompareOnGpu(a.get(), e.get(), ptxb::DType::kBFloat16, actual.size(), {}, nullptr);
  EXPECT_TRUE(r.ok()) << r.status();
  return *r;
}

TEST(CompareOnGpuTest, ToleranceRuleWithOneStepOfTheExpectedValue) {
  PTXB_REQUIRE_GPU();
  // 1.015625 vs 1.03125: two bf16 steps apart; judged after one step, 0.0078 <= 0.01.
  reference::CompareResult r = Compare({1.015625f, 100.0f, 0.001f}, {1.03125f, 100.5f, 0.0f});
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.matched, 3);
  EXPECT_NEAR(r.max_abs_error, 0.5, 1e-6);  // reported without the allowance
  // 1.0 vs 1.03125 is four steps: fails (0.0234 > 0.01 and 2.3% > 1%).
  r = Compare({1.0f, 2.0f, 5.0f}, {1.03125f, 2.0f, 5.5f});
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.matched, 1);
  EXPECT_EQ(r.first_mismatch, 0);
}

TEST(CompareOnGpuTest, NaNFailsAndIsCounted) {
  PTXB_REQUIRE_GPU();
  reference::CompareResult r = Compare({1.0f, NAN, 3.0f}, {1.0f, 2.0f, 3.0f});
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.nonfinite, 1);
  EXPECT_EQ(r.first_mismatch, 1);
}

// The constant-output rule (reference::CompareResult::constant), on the
// device as on the host: zeros, a constant and the untouched NaN poison
// fail where the expected values vary, every element within atol or not.
TEST(CompareOnGpuTest, AConstantOutputFailsWhereTheExpectedValuesVary) {
  PTXB_REQUIRE_GPU();
  const std::vector<float> small = {1e-4f, -3e-4f, 2e-5f, 5e-4f, 0.0f};
  for (float c : {0.0f, 2e-4f}) {
    reference::CompareResult r = Compare(std::vector<float>(small.size(), c), small);
    EXPECT_EQ(r.matched, 5) << "every element within atol";
    EXPECT_EQ(r.actual_varying, 0);
    EXPECT_EQ(r.expected_varying, 4);
    EXPECT_FALSE(r.passed) << c;
  }
  // A large output of one integer (the int poison, -1) against varying values.
  std::vector<float> ramp(1 << 20), minus_one(1 << 20, -1.0f);
  for (size_t i = 0; i < ramp.size(); ++i) ramp[i] = static_cast<float>(i % 7) - 1.0f;
  auto a = Upload<int32_t>(minus_one);
  auto e = Upload<int32_t>(ramp);
  reference::Tolerance loose;
  loose.required_matched_ratio = 0.0;
  auto r = CompareOnGpu(a.get(), e.get(), ptxb::DType::kInt32, ramp.size(), loose, nullptr);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->constant());
  EXPECT_FALSE(r->passed) << "even with no matched ratio required";
  // The right values, and a constant expected output, pass.
  EXPECT_TRUE(Compare(small, small).passed);
  EXPECT_TRUE(Compare(std::vector<float>(5, 1.0f), std::vector<float>(5, 1.0f)).passed);
}

// The relative-L2 rule (CompareResult::unrelated) on the device: small values
// unrelated to the expected ones fail, the expected ones rounded pass.
TEST(CompareOnGpuTest, AnOutputThatDoesNotFollowTheExpectedValuesFails) {
  PTXB_REQUIRE_GPU();
  std::vector<float> expected, unrelated;
  for (int i = 0; i < 4096; ++i) {
    expected.push_back(1e-4f * std::sin(0.37f * i));
    unrelated.push_back(1e-4f * std::cos(1.91f * i + 0.5f));
  }
  reference::CompareResult r = Compare(unrelated, expected);
  EXPECT_EQ(r.matched, 4096);
  EXPECT_GT(r.relative_l2(), 1.0);
  EXPECT_FALSE(r.passed);
  reference::CompareResult same = Compare(expected, expected);
  EXPECT_LT(same.relative_l2(), 1e-6);
  EXPECT_TRUE(same.passed);
}

TEST(CompareOnGpuTest, Float32GetsNoAllowance) {
  PTXB_REQUIRE_GPU();
  auto a = Upload<float>({1.0f, 1.0f});
  auto e = Upload<float>({1.0f, 1.0105f});
  auto r = CompareOnGpu(a.get(), e.get(), ptxb::DType::kFloat32, 2, {}, nullptr);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->passed);
  EXPECT_EQ(r->first_mismatch, 1);
}

TEST(CompareOnGpuTest, Float16GetsOneStepOfItsOwn) {
  PTXB_REQUIRE_GPU();
  // 1.0 vs 1.0107421875: eleven bits, so 1.0107 is 11 steps of 2^-10 above 1;
  // judged after one step 0.0098 <= 0.01 passes, 1.0 vs 1.0126953125 does not.
  auto a = Upload<__half>({1.0f, 1.0f});
  auto e = Upload<__half>({1.0107421875f, 1.0126953125f});
  auto r = CompareOnGpu(a.get(), e.get(), ptxb::DType::kFloat16, 2, {}, nullptr);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->matched, 1);
  EXPECT_EQ(r->first_mismatch, 1);
}

TEST(CompareOnGpuTest, LargeIntegersAreComparedExactly) {
  PTXB_REQUIRE_GPU();
  // In float32 these two would be equal (2^30 + 1 rounds to 2^30); in
  // float64 they differ, by 1, and rtol = 0 leaves no room.
  std::vector<int64_t> actual = {int64_t{1} << 30, 7}, expected = {(int64_t{1} << 30) + 1, 7};
  auto a = DeviceBuffer<int64_t>::Allocate(2);
  auto e = DeviceBuffer<int64_t>::Allocate(2);
  ASSERT_TRUE(a.ok() && e.ok());
  cudaMemcpy(a->get(), actual.data(), 16, cudaMemcpyHostToDevice);
  cudaMemcpy(e->get(), expected.data(), 16, cudaMemcpyHostToDevice);
  reference::Tolerance exact;
  exact.atol = 0.5;
  exact.rtol = 0;
  auto r = CompareOnGpu(a->get(), e->get(), ptxb::DType::kInt64, 2, exact, nullptr);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->matched, 1);
  EXPECT_EQ(r->first_mismatch, 0);
  EXPECT_EQ(r->nonfinite, 0);
}

TEST(CountChangedBytesTest, CountsDifferingBytes) {
  PTXB_REQUIRE_GPU();
  auto a = Upload<float>({1, 2, 3, 4});
  auto b = Upload<float>({1, 2, 3, 4});
  auto n = CountChangedBytes(a.get(), b.get(), 16, nullptr);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 0);
  cudaMemset(a.get(), 0, 4);
  n = CountChangedBytes(a.get(), b.get(), 16, nullptr);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 2);  // 1.0f is 0x3f800000: two of its bytes are non-zero
}

}  // namespace
}  // namespace ptxbench::runner
