#include "worker/runner/measure/fixed_inputs.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "nlohmann/json.hpp"

namespace ptxbench::runner {
namespace {

using ::testing::HasSubstr;

template <typename T>
T Decode(const std::string& bytes) {
  EXPECT_EQ(bytes.size(), sizeof(T));
  T v;
  std::memcpy(&v, bytes.data(), sizeof(T));
  return v;
}

TEST(EncodeScalarTest, NumbersInEachDtype) {
  EXPECT_EQ(Decode<float>(*EncodeScalar("1e-06", ptxb::DType::kFloat32)), 1e-6f);
  EXPECT_EQ(__half2float(Decode<__half>(*EncodeScalar("0.5", ptxb::DType::kFloat16))), 0.5f);
  EXPECT_EQ(__bfloat162float(Decode<__nv_bfloat16>(*EncodeScalar("3", ptxb::DType::kBFloat16))),
            3.0f);
  EXPECT_EQ(Decode<int32_t>(*EncodeScalar("-7", ptxb::DType::kInt32)), -7);
  EXPECT_EQ(Decode<int64_t>(*EncodeScalar("9007199254740993", ptxb::DType::kInt64)),
            int64_t{9007199254740993});  // beyond a double's exact integers
  EXPECT_EQ(Decode<int8_t>(*EncodeScalar("2.0", ptxb::DType::kInt8)), 2);
  EXPECT_EQ(Decode<uint8_t>(*EncodeScalar("true", ptxb::DType::kBool)), 1);
  EXPECT_EQ(Decode<uint8_t>(*EncodeScalar("0", ptxb::DType::kBool)), 0);
  EXPECT_EQ(Decode<float>(*EncodeScalar("false", ptxb::DType::kFloat32)), 0.0f);
}

TEST(EncodeScalarTest, ValuesTheDtypeCannotHoldAreRefused) {
  EXPECT_THAT(EncodeScalar("1.5", ptxb::DType::kInt32).status().message(),
              HasSubstr("the scalar 1.5 is not an integer that fits the dtype"));
  EXPECT_THAT(EncodeScalar("300", ptxb::DType::kInt8).status().message(),
              HasSubstr("not an integer that fits"));
  EXPECT_THAT(EncodeScalar("2", ptxb::DType::kBool).status().message(), HasSubstr("not a boolean"));
  EXPECT_THAT(EncodeScalar("\"x\"", ptxb::DType::kFloat32).status().message(),
              HasSubstr("is not a number"));
  EXPECT_FALSE(EncodeScalar("", ptxb::DType::kFloat32).ok());
}

class LoadFixedInputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    definition_.name = "rmsnorm";
    definition_.inputs = {{"x", {"n", "h"}, false, "bfloat16"},
                          {"weight", {"h"}, false, "bfloat16"},
                          {"eps", {}, true, "float32"}};
    path_ = (std::filesystem::path(::testing::TempDir()) /
             ("fixed_inputs_test_" + std::to_string(getpid()) + ".safetensors"))
                .string();
    const std::string header =
        nlohmann::json{{"w", {{"dtype", "BF16"}, {"shape", {4}}, {"data_offsets", {0, 8}}}}}.dump();
    std::string file(8, '\0');
    for (int i = 0; i < 8; ++i) file[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
    std::ofstream(path_, std::ios::binary) << file << header << std::string("\x80\x3f\x00\x40\x40\x40\x80\x40", 8);
  }
  void TearDown() override { std::filesystem::remove(path_); }

  workloads::Definition definition_;
  std::string path_;
};

TEST_F(LoadFixedInputsTest, AFileTensorAndAScalarAreTakenExactly) {
  WorkloadSpec w{"u", {{"n", 2}, {"h", 4}}, {{"weight", "", path_, "w"}, {"eps", "1e-05", "", ""}}};
  absl::StatusOr<std::vector<FixedValue>> values = LoadFixedInputs(definition_, w);
  ASSERT_TRUE(values.ok()) << values.status();
  ASSERT_EQ(values->size(), 2u);
  EXPECT_EQ((*values)[0].index, 1);
  EXPECT_EQ((*values)[0].bytes, std::string("\x80\x3f\x00\x40\x40\x40\x80\x40", 8));  // 1, 2, 3, 4
  EXPECT_EQ((*values)[1].index, 2);
  EXPECT_EQ(Decode<float>((*values)[1].bytes), 1e-5f);
}

TEST_F(LoadFixedInputsTest, MismatchesAreNamed) {
  // The workload's shape says 8 elements; the file holds 4.
  WorkloadSpec w{"u", {{"n", 2}, {"h", 8}}, {{"weight", "", path_, "w"}}};
  EXPECT_FALSE(LoadFixedInputs(definition_, w).ok());
  w = {"u", {{"n", 2}, {"h", 4}}, {{"weight", "", path_, "missing"}}};
  EXPECT_THAT(LoadFixedInputs(definition_, w).status().message(), HasSubstr("missing"));
  w = {"u", {{"n", 2}, {"h", 4}}, {{"x", "1.0", "", ""}}};
  EXPECT_THAT(LoadFixedInputs(definition_, w).status().message(),
              HasSubstr("input x is a tensor; a scalar source cannot fill it"));
  w = {"u", {{"n", 2}, {"h", 4}}, {{"nope", "1.0", "", ""}}};
  EXPECT_THAT(LoadFixedInputs(definition_, w).status().message(), HasSubstr("no input named nope"));
}

}  // namespace
}  // namespace ptxbench::runner
