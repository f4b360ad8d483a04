#include "common/json_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace ptxbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Json = StrictJson;

std::string Message(const absl::Status& s) { return std::string(s.message()); }

TEST(ParseStrictJsonTest, MalformedJsonNamesLineAndColumn) {
  auto parsed = ParseStrictJson("{\n  \"a\": 1,\n  \"b\": tru\n}", "x.json");
  ASSERT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(parsed.status()), HasSubstr("x.json: line 3, column 11: malformed JSON: "));
  EXPECT_THAT(Message(parsed.status()), HasSubstr("invalid literal"));
  EXPECT_THAT(Message(parsed.status()), Not(HasSubstr("json.exception")));
}

TEST(ParseStrictJsonTest, PositionAgreesWithNlohmann) {
  // nlohmann says where it stopped; ours must say the same place.
  const std::string text = "[1,\n 2,\n  {\"k\": ]]";
  std::string theirs;
  try {
    theirs = nlohmann::json::parse(text).dump();
  } catch (const nlohmann::json::parse_error& e) {
    theirs = e.what();
  }
  const size_t line = theirs.find("line ");
  ASSERT_NE(line, std::string::npos) << theirs;
  const std::string where = theirs.substr(line, theirs.find(':', line) - line);
  EXPECT_THAT(Message(ParseStrictJson(text, "p.json").status()),
              HasSubstr("p.json: " + where + ": malformed JSON"));
}

TEST(ParseStrictJsonTest, EmptyTextIsMalformedAtTheStart) {
  auto parsed = ParseStrictJson("", "e.json");
  ASSERT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(parsed.status()), HasSubstr("e.json: line 1, column 1: malformed JSON"));
}

TEST(ParseStrictJsonTest, RepeatedKeyIsAnErrorNamingItsPath) {
  auto parsed = ParseStrictJson(R"({"a": [{"b": 1}, {"c": 2, "c": 3}]})", "d.json");
  ASSERT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Message(parsed.status()),
            "d.json: $.a[1].c: expected each key once per object, found 3; the key is given "
            "more than once");
}

TEST(ParseStrictJsonTest, SameKeyInDifferentObjectsIsFine) {
  auto parsed = ParseStrictJson(R"([{"a": 1}, {"a": 2}, {"b": {"a": 3}}])", "ok.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ((*parsed)[2]["b"]["a"], 3);
}

TEST(ParseStrictJsonTest, KeepsTheFileOrderOfKeys) {
  auto parsed = ParseStrictJson(R"({"z": 1, "a": 2, "m": 3})", "o.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->dump(), R"({"z":1,"a":2,"m":3})");
}

TEST(JsonPathTest, PathsStartAtTheRootAndQuoteKeysThatAreNotPlainNames) {
  EXPECT_EQ(JsonPath(""), "$");
  EXPECT_EQ(JsonPath(JsonField("", "samples")), "$.samples");
  EXPECT_EQ(JsonPath(JsonIndex("", 0)), "$[0]");
  EXPECT_EQ(JsonPath(JsonField(JsonIndex("models", 2), "max_turns")), "$.models[2].max_turns");
  EXPECT_EQ(JsonPath(JsonField("tags", "ptxb-no-hint")), "$.tags.ptxb-no-hint");
  EXPECT_EQ(JsonPath(JsonField("models", "gpt-4.1")), "$.models[\"gpt-4.1\"]");
  EXPECT_EQ(JsonPath(JsonField("", "a \"b\"")), "$[\"a \\\"b\\\"\"]");
  EXPECT_EQ(JsonPath(JsonField("", "2x")), "$[\"2x\"]");
}

TEST(JsonForErrorTest, LongValuesAreCut) {
  std::string rendered = JsonForError(Json(std::string(500, 'x')));
  EXPECT_LT(rendered.size(), 100u);
  EXPECT_THAT(rendered, HasSubstr("..."));
  EXPECT_EQ(JsonForError(Json::parse(R"({"a": [1, 2]})")), R"({"a":[1,2]})");
}

TEST(JsonReaderTest, ErrorsHaveTheOneShape) {
  JsonReader r("experiments/x.json");
  absl::Status s =
      r.Error(JsonField(JsonIndex("models", 2), "max_turns"), Json("ten"), "a positive integer");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Message(s),
            "experiments/x.json: $.models[2].max_turns: expected a positive integer, "
            "found \"ten\"");
  EXPECT_EQ(Message(r.Error("", Json(42), "an object", "a spec is a matrix or a list")),
            "experiments/x.json: $: expected an object, found 42; a spec is a matrix or a list");
  EXPECT_EQ(Message(r.Missing("name", "a name")),
            "experiments/x.json: $.name: expected a name, found nothing");
}

TEST(JsonReaderTest, RequiredNamesTheMissingKey) {
  JsonReader r("f.json");
  Json doc = Json::parse(R"({"a": {"b": 1}})");
  auto b = r.Required(doc["a"], "a", "b");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(**b, 1);
  auto c = r.Required(doc["a"], "a", "c");
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Message(c.status()),
            "f.json: $.a.c: expected a value (the key is required), found nothing");
  EXPECT_EQ(JsonReader::Member(doc, "zz"), nullptr);
}

TEST(JsonReaderTest, CheckKeysRefusesUnknownKeysAndMayAllowComments) {
  JsonReader r("f.json");
  Json doc = Json::parse(R"({"a": 1, "_note": "x"})");
  EXPECT_TRUE(r.CheckKeys(doc, "", {"a"}, /*allow_comments=*/true).ok());
  absl::Status s = r.CheckKeys(doc, "", {"a"}, /*allow_comments=*/false);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Message(s), "f.json: $._note: expected a known key (a), found an unknown key");
  EXPECT_EQ(Message(r.CheckKeys(Json::parse(R"({"b": 1})"), "p", {"a", "c"}, true)),
            "f.json: $.p.b: expected a known key (a, c; keys starting with '_' are comments), "
            "found an unknown key");
}

TEST(JsonReaderTest, StringsAndLists) {
  JsonReader r("f.json");
  EXPECT_EQ(*r.String(Json("x"), "s"), "x");
  EXPECT_EQ(*r.String(Json(""), "s", /*allow_empty=*/true), "");
  EXPECT_EQ(Message(r.String(Json(""), "s").status()),
            "f.json: $.s: expected a non-empty string, found \"\"");
  EXPECT_EQ(Message(r.String(Json(3), "s", true).status()),
            "f.json: $.s: expected a string, found 3");
  auto list = r.StringList(Json::parse(R"(["a", "b"])"), "l");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(*list, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Message(r.StringList(Json("a"), "l").status()),
            "f.json: $.l: expected a list of strings, found \"a\"");
  EXPECT_EQ(Message(r.StringList(Json::parse(R"(["a", 1])"), "l").status()),
            "f.json: $.l[1]: expected a non-empty string, found 1");
}

TEST(JsonReaderTest, EnumNamesTheChoices) {
  JsonReader r("f.json");
  EXPECT_EQ(*r.Enum(Json("ptx"), "language", {"cuda", "ptx"}), "ptx");
  EXPECT_EQ(Message(r.Enum(Json("triton"), "language", {"cuda", "ptx"}).status()),
            "f.json: $.language: expected one of \"cuda\", \"ptx\", found \"triton\"");
  EXPECT_EQ(r.Enum(Json(1), "language", {"cuda"}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(JsonReaderTest, IntegersAreWholeAndInRange) {
  JsonReader r("f.json");
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(*r.Integer(Json(5), "n", 1, 10), 5);
  EXPECT_EQ(Message(r.Integer(Json(0), "n", 1, 10).status()),
            "f.json: $.n: expected an integer from 1 to 10, found 0");
  EXPECT_EQ(Message(r.Integer(Json(11), "n", 1, 10).status()),
            "f.json: $.n: expected an integer from 1 to 10, found 11");
  EXPECT_EQ(Message(r.Integer(Json(2.0), "n", 1, 10).status()),
            "f.json: $.n: expected an integer from 1 to 10, found 2.0");
  EXPECT_EQ(Message(r.Integer(Json("ten"), "n", 1, kMax).status()),
            "f.json: $.n: expected a positive integer, found \"ten\"");
  EXPECT_EQ(Message(r.Integer(Json(-1), "n", 0, kMax).status()),
            "f.json: $.n: expected a non-negative integer, found -1");
  // Beyond int64: refused, not wrapped around.
  EXPECT_EQ(r.Integer(Json(uint64_t{1} << 63), "n", 1, kMax).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(*r.Integer(Json(kMax), "n", 1, kMax), kMax);
}

TEST(JsonReaderTest, Numbers) {
  JsonReader r("f.json");
  EXPECT_EQ(*r.Number(Json(1), "x"), 1.0);
  EXPECT_EQ(Message(r.Number(Json("1"), "x").status()),
            "f.json: $.x: expected a number, found \"1\"");
  EXPECT_EQ(*r.NonNegativeNumber(Json(0), "x"), 0.0);
  EXPECT_EQ(Message(r.NonNegativeNumber(Json(-0.5), "x").status()),
            "f.json: $.x: expected a number of at least 0, found -0.5");
  EXPECT_EQ(Message(r.RequireObject(Json::array(), "o")),
            "f.json: $.o: expected an object, found []");
}

TEST(CheckJsonDepthTest, CountsNestingOutsideStringsOnly) {
  EXPECT_TRUE(CheckJsonDepth(R"({"a":[1,{"b":2}]})", 3, "body").ok());
  const absl::Status deep = CheckJsonDepth(R"({"a":[1,{"b":[2]}]})", 3, "body");
  EXPECT_EQ(deep.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(deep.message(), HasSubstr("body: nested more than 3 levels deep"));
  // Brackets inside strings, escaped quotes included, are text.
  EXPECT_TRUE(CheckJsonDepth(R"(["[[[[\"{{{{", "]]"])", 1, "body").ok());
  // A million levels are refused without recursion.
  EXPECT_FALSE(CheckJsonDepth(std::string(1'000'000, '['), 64, "body").ok());
}

}  // namespace
}  // namespace ptxbench
