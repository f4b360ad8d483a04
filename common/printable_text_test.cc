#include "common/printable_text.h"

#include <string>

#include "gtest/gtest.h"

namespace ptxbench {
namespace {

TEST(PrintableTextTest, KeepsPrintableAsciiAndCutsToTheLimit) {
  EXPECT_EQ(PrintableText("gemm_kernel<128>", 100), "gemm_kernel<128>");
  EXPECT_EQ(PrintableText("abcdef", 3), "abc");
  EXPECT_EQ(PrintableText("", 3), "");
}

TEST(PrintableTextTest, EveryOtherByteIsAQuestionMark) {
  // An escape sequence, a newline, a tab, DEL and UTF-8 ("é", two bytes).
  EXPECT_EQ(PrintableText("\x1b[31mred\n\t\x7f\xc3\xa9", 100), "?[31mred?????");
  EXPECT_EQ(PrintableText(std::string("a\0b", 3), 100), "a?b");
}

TEST(PrintableTextTest, LinesKeepTheirNewlinesAndTabs) {
  EXPECT_EQ(PrintableLines("\x1b[31mred\n\t\x7f\xc3\xa9", 100), "?[31mred\n\t???");
  EXPECT_EQ(PrintableLines("one\r\ntwo", 100), "one?\ntwo");
  EXPECT_EQ(PrintableLines("abc\ndef", 5), "abc\nd");
}

}  // namespace
}  // namespace ptxbench
