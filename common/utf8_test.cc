#include "common/utf8.h"

#include <google/protobuf/wrappers.pb.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ptxbench {
namespace {

using namespace std::string_literals;  // NOLINT: "\0"s

// Edge cases of RFC 3629 on both sides of each range.
const std::vector<std::string>& Valid() {
  static const auto* v =
      new std::vector<std::string>{"",
                                   "kernel.cu",
                                   "\0"s,
                                   "\x7f",
                                   "\xc2\x80",
                                   "\xdf\xbf",
                                   "\xe0\xa0\x80",
                                   "\xed\x9f\xbf",
                                   "\xee\x80\x80",
                                   "\xef\xbf\xbf",
                                   "\xf0\x90\x80\x80",
                                   "\xf4\x8f\xbf\xbf",
                                   "gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x98\x80",
                                   "a\\xff"};
  return *v;
}
// Each with its first bad offset.
const std::vector<std::pair<std::string, size_t>>& Invalid() {
  static const auto* v = new std::vector<std::pair<std::string, size_t>>{
      {"\x80", 0},                // a lone continuation byte
      {"ab\xff", 2},              // never in UTF-8
      {"\xc0\xaf", 0},            // overlong '/'
      {"\xc1\xbf", 0},            // overlong
      {"\xe0\x9f\xbf", 0},        // overlong
      {"\xed\xa0\x80", 0},        // a surrogate
      {"\xf0\x8f\xbf\xbf", 0},    // overlong
      {"\xf4\x90\x80\x80", 0},    // past U+10FFFF
      {"\xf5\x80\x80\x80", 0},    // past U+10FFFF
      {"ok\xc3", 2},              // truncated at the end
      {"ok\xe2\x82", 2},          // truncated at the end
      {"\xe2\x82x", 0},           // truncated inside
      {"x\n\xc3\xa9\n\xfe", 5}};  // after valid multibyte text
  return *v;
}

TEST(Utf8Test, ValidAndInvalidAsRfc3629Says) {
  for (const std::string& s : Valid()) {
    EXPECT_TRUE(IsValidUtf8(s)) << s;
    EXPECT_EQ(DescribeInvalidUtf8(s), "") << s;
  }
  for (const auto& [s, offset] : Invalid()) {
    EXPECT_FALSE(IsValidUtf8(s)) << s;
    EXPECT_EQ(FirstInvalidUtf8(s), offset) << s;
  }
}

// The class this module exists for: what it calls valid is exactly what a
// proto3 `string` field accepts when parsed.
TEST(Utf8Test, ValidIsWhatAProtoStringFieldParses) {
  std::vector<std::string> all = Valid();
  for (const auto& [s, offset] : Invalid()) all.push_back(s);
  for (const std::string& s : all) {
    // Serialized as bytes: the wire format of a string and a bytes field is
    // the same, and serializing a bad string only logs.
    google::protobuf::BytesValue bytes;
    bytes.set_value(s);
    google::protobuf::StringValue parsed;
    EXPECT_EQ(parsed.ParseFromString(bytes.SerializeAsString()), IsValidUtf8(s)) << s;
  }
}

TEST(Utf8Test, DescribeNamesTheByteItsOffsetLineAndColumn) {
  EXPECT_EQ(DescribeInvalidUtf8("x\n\xc3\xa9\n\xfe"), "byte 0xfe at offset 5 (line 3, column 1)");
  EXPECT_EQ(DescribeInvalidUtf8("// k\n  a\x80"), "byte 0x80 at offset 8 (line 2, column 4)");
}

TEST(Utf8Test, EscapeKeepsValidTextAndMakesTheRestReadBack) {
  for (const std::string& s : Valid()) EXPECT_EQ(EscapeInvalidUtf8(s), s);
  EXPECT_EQ(EscapeInvalidUtf8("bad\xffname.cu"), "bad\\xffname.cu");
  // A backslash is doubled once escaping happens, so a name that spells an
  // escape does not meet the escape of another.
  EXPECT_EQ(EscapeInvalidUtf8("a\\xff\xfe"), "a\\\\xff\\xfe");
  EXPECT_NE(EscapeInvalidUtf8("\\xff\xfe"), EscapeInvalidUtf8("\xff\xfe"));
  // Valid sequences stay whole; only the bytes outside them are written.
  EXPECT_EQ(EscapeInvalidUtf8("\xc3\xa9\xe2\x82"), "\xc3\xa9\\xe2\\x82");
  for (const auto& [s, offset] : Invalid()) EXPECT_TRUE(IsValidUtf8(EscapeInvalidUtf8(s))) << s;
}

TEST(Utf8Test, ReplaceWritesOneReplacementCharacterPerRun) {
  for (const std::string& s : Valid()) EXPECT_EQ(ReplaceInvalidUtf8(s), s);
  EXPECT_EQ(ReplaceInvalidUtf8("a\xff\xfe"
                               "b\x80"),
            "a\xef\xbf\xbd"
            "b\xef\xbf\xbd");
  for (const auto& [s, offset] : Invalid()) EXPECT_TRUE(IsValidUtf8(ReplaceInvalidUtf8(s))) << s;
}

}  // namespace
}  // namespace ptxbench
