#include "common/hash.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace ptxbench {
namespace {

TEST(HashTest, KnownSha256Vectors) {
  EXPECT_EQ(Sha256Hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(HashTest, StableHash64IsTheDigestPrefix) {
  EXPECT_EQ(StableHash64("abc"), 0xba7816bf8f01cfeaULL);
  EXPECT_NE(StableHash64("a"), StableHash64("b"));
}

// A file is hashed in pieces: the same digest as its bytes at once, across
// the 1 MiB piece boundary; a missing file is NOT_FOUND naming it.
TEST(HashTest, AFileHashesLikeItsBytes) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("ptxb_hash_" + std::to_string(getpid())))
                               .string();
  std::string bytes(3 * (1 << 20) + 17, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7919 % 251);
  std::ofstream(path, std::ios::binary) << bytes;
  absl::StatusOr<std::string> hashed = Sha256FileHex(path);
  ASSERT_TRUE(hashed.ok()) << hashed.status();
  EXPECT_EQ(*hashed, Sha256Hex(bytes));
  std::ofstream(path, std::ios::binary | std::ios::trunc);
  EXPECT_EQ(*Sha256FileHex(path), Sha256Hex(""));
  std::filesystem::remove(path);
  absl::StatusOr<std::string> missing = Sha256FileHex(path);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find(path), absl::string_view::npos);
}

}  // namespace
}  // namespace ptxbench
