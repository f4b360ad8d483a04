#include "common/hash.h"

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

}  // namespace
}  // namespace ptxbench
