#include "testing/csv.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxbench::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(CsvTest, QuotedFieldsHoldCommasQuotesAndLineBreaks) {
  auto rows =
      ParseCsv("a,b,c\r\n\"x,1\",\"say \"\"hi\"\"\",\"two\r\nlines\"\r\n,,\r\n", CsvLineEnd::kCrlf);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(*rows, ElementsAre(ElementsAre("a", "b", "c"),
                                 ElementsAre("x,1", "say \"hi\"", "two\r\nlines"),
                                 ElementsAre("", "", "")));
}

TEST(CsvTest, LineEndsMustBeOfTheKindAsked) {
  EXPECT_TRUE(ParseCsv("a\nb\n", CsvLineEnd::kLf).ok());
  EXPECT_TRUE(ParseCsv("a\r\nb\n", CsvLineEnd::kEither).ok());
  EXPECT_THAT(ParseCsv("a\r\nb\n", CsvLineEnd::kCrlf).status().message(),
              HasSubstr("row 2: ends in LF, not CRLF"));
  EXPECT_THAT(ParseCsv("a\r\n", CsvLineEnd::kLf).status().message(), HasSubstr("CRLF, not LF"));
  EXPECT_EQ(ParseCsv("a\rb\n", CsvLineEnd::kEither).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CsvTest, TextThatIsNotWholeRowsIsRefused) {
  EXPECT_THAT(ParseCsv("a,b\nc", CsvLineEnd::kLf).status().message(),
              HasSubstr("row 2: the text ends inside a row"));
  EXPECT_THAT(ParseCsv("a,\"b\n", CsvLineEnd::kLf).status().message(),
              HasSubstr("ends inside a quoted field"));
  EXPECT_THAT(ParseCsv("a\"b\"\n", CsvLineEnd::kLf).status().message(),
              HasSubstr("a quote inside an unquoted field"));
  EXPECT_THAT(ParseCsv("\"a\"b\n", CsvLineEnd::kLf).status().message(),
              HasSubstr("text after a closing quote"));
  auto empty = ParseCsv("", CsvLineEnd::kCrlf);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

}  // namespace
}  // namespace ptxbench::testing
