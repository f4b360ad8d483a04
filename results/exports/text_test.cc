#include "results/exports/text.h"

#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <string>

namespace ptxbench::exports {
namespace {

std::string Json(absl::string_view text) {
  std::string out;
  AppendJsonString(&out, text);
  return out;
}

std::string Csv(absl::string_view text) {
  std::string out;
  AppendCsvField(&out, text);
  return out;
}

std::string Number(double x) {
  std::string out;
  AppendDouble(&out, x);
  return out;
}

TEST(TextTest, JsonStringsEscapeWhatJsonRequires) {
  EXPECT_EQ(Json("plain"), "\"plain\"");
  EXPECT_EQ(Json("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(Json("l1\nl2\r\t\b\f"), R"("l1\nl2\r\t\b\f")");
  EXPECT_EQ(Json(std::string("\x01\x1f", 2)), R"("\u0001\u001f")");
  EXPECT_EQ(Json("h\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"), "\"h\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"");
}

TEST(TextTest, InvalidUtf8BecomesTheReplacementCharacter) {
  // A lone continuation byte, a truncated sequence, an overlong form, a
  // surrogate: each invalid byte is replaced, the rest kept.
  const std::string bad = "a\x80" "b\xE2\x82" "c\xC0\xAF" "d\xED\xA0\x80";
  const std::string json = Json(bad);
  const auto parsed = nlohmann::json::parse(json);  // throws on invalid UTF-8
  EXPECT_EQ(parsed.get<std::string>().substr(0, 4), "a\xEF\xBF\xBD" );
  EXPECT_NE(json.find('d'), std::string::npos);
  const std::string csv = Csv(bad);
  EXPECT_EQ(csv.find('\x80'), std::string::npos);
  EXPECT_NE(csv.find("\xEF\xBF\xBD"), std::string::npos);
}

TEST(TextTest, CsvFieldsAreQuotedOnlyWhenTheyMustBe) {
  EXPECT_EQ(Csv("plain text"), "plain text");
  EXPECT_EQ(Csv(""), "");
  EXPECT_EQ(Csv("a,b"), "\"a,b\"");
  EXPECT_EQ(Csv("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(Csv("l1\nl2"), "\"l1\nl2\"");
  EXPECT_EQ(Csv("cr\r"), "\"cr\r\"");
}

TEST(TextTest, DoublesAreShortestAndExact) {
  EXPECT_EQ(Number(0.1), "0.1");
  EXPECT_EQ(Number(3), "3");
  EXPECT_EQ(Number(-2.5), "-2.5");
  EXPECT_EQ(Number(1e-300), "1e-300");
  for (double x : {1.0 / 3, 123456.789e10, std::numeric_limits<double>::min(),
                   std::numeric_limits<double>::max()}) {
    EXPECT_EQ(std::stod(Number(x)), x) << Number(x);
  }
}

TEST(TextTest, TimesAreUtc) {
  EXPECT_EQ(Rfc3339Millis(1767225600006), "2026-01-01T00:00:00.006Z");
  EXPECT_EQ(Rfc3339(absl::FromUnixSeconds(1767225601)), "2026-01-01T00:00:01Z");
}

}  // namespace
}  // namespace ptxbench::exports
