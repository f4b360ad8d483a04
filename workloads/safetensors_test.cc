#include "workloads/safetensors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "workloads/testing/safetensors_file.h"

namespace ptxbench::workloads {
namespace {

using ::testing::HasSubstr;

constexpr auto Pack = testing::PackSafetensors;

class SafetensorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::path(::testing::TempDir()) /
             ("safetensors_test_" + std::to_string(getpid()) + ".safetensors"))
                .string();
    // indptr: int32 [3] = {0, 2, 5}; scale: bf16 [2, 2].
    std::string data(12 + 8, '\0');
    const int32_t indptr[3] = {0, 2, 5};
    std::memcpy(data.data(), indptr, 12);
    for (int i = 0; i < 8; ++i) data[12 + i] = static_cast<char>(i + 1);
    std::ofstream(path_, std::ios::binary)
        << Pack({{"__metadata__", {{"format", "pt"}}},
                 {"indptr", {{"dtype", "I32"}, {"shape", {3}}, {"data_offsets", {0, 12}}}},
                 {"scale", {{"dtype", "BF16"}, {"shape", {2, 2}}, {"data_offsets", {12, 20}}}}},
                data);
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::string path_;
};

TEST_F(SafetensorsTest, ATensorIsReadExactlyAsDeclared) {
  auto bytes = LoadSafetensorsTensor(path_, "indptr", "int32", {3});
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  ASSERT_EQ(bytes->size(), 12u);
  int32_t values[3];
  std::memcpy(values, bytes->data(), 12);
  EXPECT_EQ(values[2], 5);
  auto scale = LoadSafetensorsTensor(path_, "scale", "bfloat16", {2, 2});
  ASSERT_TRUE(scale.ok()) << scale.status();
  EXPECT_EQ((*scale)[7], 8);
}

TEST_F(SafetensorsTest, ADifferentDtypeShapeOrKeyIsNamed) {
  auto dtype = LoadSafetensorsTensor(path_, "indptr", "int64", {3});
  EXPECT_THAT(std::string(dtype.status().message()),
              HasSubstr("tensor \"indptr\" is I32, the definition declares int64"));
  auto shape = LoadSafetensorsTensor(path_, "scale", "bfloat16", {4});
  EXPECT_THAT(std::string(shape.status().message()),
              HasSubstr("has shape [2, 2], the workload needs [4]"));
  auto key = LoadSafetensorsTensor(path_, "nope", "int32", {3});
  EXPECT_EQ(key.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(key.status().message()), HasSubstr("(it has: indptr, scale)"));
  EXPECT_EQ(LoadSafetensorsTensor(path_ + ".missing", "x", "int32", {1}).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(SafetensorsTest, TheHeaderCheckAgreesWithTheLoad) {
  EXPECT_TRUE(CheckSafetensorsTensor(path_, "indptr", "int32", {3}).ok());
  EXPECT_TRUE(CheckSafetensorsTensor(path_, "scale", "bfloat16", {2, 2}).ok());
  struct Case {
    std::string key, dtype;
    std::vector<int64_t> dims;
  };
  for (const Case& c : {Case{"indptr", "int64", {3}}, Case{"scale", "bfloat16", {4}},
                        Case{"nope", "int32", {3}}}) {
    const absl::Status check = CheckSafetensorsTensor(path_, c.key, c.dtype, c.dims);
    EXPECT_FALSE(check.ok()) << c.key;
    EXPECT_EQ(check, LoadSafetensorsTensor(path_, c.key, c.dtype, c.dims).status()) << c.key;
  }
  EXPECT_EQ(CheckSafetensorsTensor(path_ + ".missing", "x", "int32", {1}),
            absl::NotFoundError(path_ + ".missing: cannot be read"));
}

TEST_F(SafetensorsTest, TheHeaderCheckReadsNoData) {
  // A 1 GiB tensor in a sparse file: checked from its header alone.
  const uint64_t bytes = uint64_t{1} << 30;
  const std::string header = Pack(
      {{"big", {{"dtype", "BF16"}, {"shape", {bytes / 2}}, {"data_offsets", {0, bytes}}}}}, "");
  std::ofstream(path_, std::ios::binary | std::ios::trunc) << header;
  std::filesystem::resize_file(path_, header.size() + bytes);
  EXPECT_TRUE(CheckSafetensorsTensor(path_, "big", "bfloat16", {int64_t(bytes / 2)}).ok());
  // Cut short, the same header no longer fits its file.
  std::filesystem::resize_file(path_, header.size() + 10);
  EXPECT_THAT(
      std::string(CheckSafetensorsTensor(path_, "big", "bfloat16", {int64_t(bytes / 2)}).message()),
      HasSubstr(": $.big.data_offsets: expected offsets [begin, end] within the 10 bytes "
                "of data, found [0,1073741824]"));
  std::filesystem::resize_file(path_, 5);
  EXPECT_THAT(std::string(CheckSafetensorsTensor(path_, "big", "bfloat16", {1}).message()),
              HasSubstr("shorter than its 8-byte header length"));
}

TEST(SafetensorsHeaderTest, InconsistentFilesAreRefused) {
  const nlohmann::json ok = {{"t", {{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", {0, 8}}}}};
  EXPECT_TRUE(ParseSafetensorsHeader(Pack(ok, std::string(8, 'x')), "f").ok());
  // Data shorter than the offsets say.
  EXPECT_EQ(std::string(ParseSafetensorsHeader(Pack(ok, "xx"), "f").status().message()),
            "f: $.t.data_offsets: expected offsets [begin, end] within the 2 bytes of data, "
            "found [0,8]");
  // A byte count that does not match the shape and dtype.
  nlohmann::json wrong = ok;
  wrong["t"]["shape"] = {3};
  EXPECT_THAT(
      std::string(ParseSafetensorsHeader(Pack(wrong, std::string(8, 'x')), "f").status().message()),
      HasSubstr("f: $.t.data_offsets: expected offsets 12 bytes apart (the shape and "
                "dtype), found [0,8]"));
  // A header length beyond the file, and garbage.
  EXPECT_FALSE(ParseSafetensorsHeader(std::string("\xff\xff\xff\xff\xff\xff\xff\x7f{}", 10), "f").ok());
  EXPECT_FALSE(ParseSafetensorsHeader("short", "f").ok());
  // Entries that are not what the format says, named by their path.
  nlohmann::json negative = ok;
  negative["t"]["shape"] = {-2};
  EXPECT_EQ(
      std::string(
          ParseSafetensorsHeader(Pack(negative, std::string(8, 'x')), "f").status().message()),
      "f: $.t.shape[0]: expected a non-negative integer, found -2");
  nlohmann::json no_offsets = ok;
  no_offsets["t"].erase("data_offsets");
  EXPECT_EQ(
      std::string(
          ParseSafetensorsHeader(Pack(no_offsets, std::string(8, 'x')), "f").status().message()),
      "f: $.t.data_offsets: expected a value (the key is required), found nothing");
  EXPECT_THAT(
      std::string(
          ParseSafetensorsHeader(std::string("\x02\0\0\0\0\0\0\0[]", 10), "f").status().message()),
      HasSubstr("f: $: expected a safetensors header"));
  nlohmann::json unknown = ok;
  unknown["t"]["dtype"] = "Q7";
  EXPECT_THAT(
      std::string(
          ParseSafetensorsHeader(Pack(unknown, std::string(8, 'x')), "f").status().message()),
      HasSubstr("f: $.t.dtype: expected a safetensors dtype (F32, F16, BF16,"));
}

}  // namespace
}  // namespace ptxbench::workloads
