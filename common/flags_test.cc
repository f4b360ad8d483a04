#include "common/flags.h"

#include <string>

#include "gtest/gtest.h"

namespace ptxbench {
namespace {

TEST(DashedArgsTest, RewritesFlagNamesOnly) {
  const char* raw[] = {"prog", "--data-dir", "my-dir", "--lease-ttl-ms=2-000", "pos-arg", "--",
                       "--keep-me"};
  DashedArgs args(7, const_cast<char**>(raw));
  ASSERT_EQ(args.argc(), 7);
  EXPECT_STREQ(args.argv()[1], "--data_dir");
  EXPECT_STREQ(args.argv()[2], "my-dir");
  EXPECT_STREQ(args.argv()[3], "--lease_ttl_ms=2-000");
  EXPECT_STREQ(args.argv()[4], "pos-arg");
  EXPECT_STREQ(args.argv()[6], "--keep-me");
  EXPECT_EQ(args.argv()[7], nullptr);
}

}  // namespace
}  // namespace ptxbench
