#include "common/text_format.h"

#include "gtest/gtest.h"

namespace ptxbench {
namespace {

TEST(TableTest, AlignsColumnsWithoutTrailingBlanks) {
  Table table({"ID", "STATE", "N"});
  table.AlignRight(2);
  table.AddRow({"tr_1", "SUBMITTED", "3"});
  table.AddRow({"tr_22", "FAILED", "12"});
  table.AddRow({"tr_333"});  // missing cells are blank
  EXPECT_EQ(table.Render(),
            "ID      STATE       N\n"
            "tr_1    SUBMITTED   3\n"
            "tr_22   FAILED     12\n"
            "tr_333\n");
  EXPECT_EQ(table.rows(), 3u);
}

TEST(TableTest, CountsCodePointsNotBytes) {
  Table table({"A", "B"});
  table.AddRow({"héé", "x"});
  table.AddRow({"abcd", "y"});
  EXPECT_EQ(table.Render(), "A     B\nhéé   x\nabcd  y\n");
  EXPECT_EQ(DisplayWidth("héé"), 3u);
}

TEST(TextFormatTest, CostAndSpeedup) {
  EXPECT_EQ(FormatCost(0), "$0.00");
  EXPECT_EQ(FormatCost(1.234), "$1.23");
  EXPECT_EQ(FormatCost(0.0012), "$0.0012");
  EXPECT_EQ(FormatSpeedup(0), "-");
  EXPECT_EQ(FormatSpeedup(1.5), "1.50x");
}

}  // namespace
}  // namespace ptxbench
