#include "workloads/json_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"

namespace ptxbench::workloads {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(JsonUtilTest, PositionOfCountsLinesAndColumnsFromOne) {
  EXPECT_EQ(PositionOf("abc", 0).line, 1);
  EXPECT_EQ(PositionOf("abc", 0).column, 1);
  EXPECT_EQ(PositionOf("ab\ncd", 4).line, 2);
  EXPECT_EQ(PositionOf("ab\ncd", 4).column, 2);
  // Past the end: the end of the text.
  EXPECT_EQ(PositionOf("ab\n", 99).line, 2);
  EXPECT_EQ(PositionOf("ab\n", 99).column, 1);
}

TEST(JsonUtilTest, MalformedJsonNamesLineAndColumn) {
  auto parsed = ParseStrictJson("{\n  \"a\": 1,\n  \"b\": tru\n}", "x.json");
  ASSERT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(parsed.status().message()),
              HasSubstr("x.json: line 3, column 11: malformed JSON: "));
  EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("invalid literal"));
  EXPECT_THAT(std::string(parsed.status().message()), Not(HasSubstr("json.exception")));
}

TEST(JsonUtilTest, PositionAgreesWithNlohmann) {
  const std::string text = "[1,\n 2,\n  {\"k\": ]]";
  try {
    nlohmann::json parsed = nlohmann::json::parse(text);
    ADD_FAILURE() << "expected a parse error, got " << parsed.dump();
    return;
  } catch (const nlohmann::json::parse_error& e) {
    TextPosition pos = PositionOf(text, e.byte - 1);
    EXPECT_THAT(e.what(),
                HasSubstr(absl::StrCat("line ", pos.line, ", column ", pos.column)));
  }
}

TEST(JsonUtilTest, DuplicateKeyIsAnErrorNamingTheField) {
  auto parsed =
      ParseStrictOrderedJson(R"({"a": [{"b": 1}, {"c": 2, "c": 3}]})", "d.json");
  ASSERT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(parsed.status().message()),
            "d.json: field \"a[1].c\": value 3: key given more than once in the same "
            "object");
}

TEST(JsonUtilTest, SameKeyInDifferentObjectsIsFine) {
  auto parsed = ParseStrictJson(R"([{"a": 1}, {"a": 2}, {"b": {"a": 3}}])", "ok.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ((*parsed)[2]["b"]["a"], 3);
}

TEST(JsonUtilTest, ValueForErrorIsShortened) {
  std::string rendered = ValueForError(nlohmann::json(std::string(500, 'x')));
  EXPECT_LT(rendered.size(), 100u);
  EXPECT_THAT(rendered, HasSubstr("..."));
}

TEST(JsonUtilTest, FieldErrorHasTheAgreedShape) {
  absl::Status s = FieldError("gemm.json", "axes.M.type", "\"variable\"",
                              "must be \"const\" or \"var\"");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(s.message()),
            "gemm.json: field \"axes.M.type\": value \"variable\": must be \"const\" or "
            "\"var\"");
}

}  // namespace
}  // namespace ptxbench::workloads
