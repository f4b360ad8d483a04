// The pipeline file (pipeline.h): the bundled examples read, every wiring
// mistake is one error naming the stage, and stage ids change exactly
// downstream of a changed parameter.

#include "pipelines/pipeline.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/data_dir.h"
#include "common/file.h"
#include "common/hash.h"
#include "experiment_spec/limits.h"

namespace ptxbench::pipelines {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

std::string Example(const std::string& name) {
  absl::StatusOr<std::string> text =
      ReadFile(absl::StrCat(DataDir(), "/examples/pipelines/", name, ".json"));
  EXPECT_TRUE(text.ok()) << text.status();
  return text.value_or("");
}

// A three-stage pipeline to break in each test.
Json Small() {
  return Json::parse(R"({"name": "p", "stages": [
    {"name": "failed", "kind": "select", "experiments": ["base"], "rows": "failed"},
    {"name": "repairs", "kind": "derive", "from": "failed", "model": "m", "prompt_tag": "t"},
    {"name": "pairs", "kind": "pairs", "from": "repairs"}]})");
}

std::string ErrorOf(const Json& pipeline) {
  absl::StatusOr<Pipeline> p = ReadPipeline(pipeline.dump(), "p.json");
  EXPECT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(p.status().message());
}

TEST(PipelineTest, TheBundledExamplesRead) {
  for (const char* name : {"fixit", "kernelgen"}) {
    absl::StatusOr<Pipeline> p = ReadPipeline(Example(name), name);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->name, name);
    EXPECT_EQ(p->stages.front().kind, "select");
    EXPECT_EQ(p->stages.back().kind, "evaluate");
    EXPECT_EQ(p->stages.back().output, Output::kEvaluation);
  }
  absl::StatusOr<Pipeline> fixit = ReadPipeline(Example("fixit"), "fixit");
  ASSERT_TRUE(fixit.ok());
  const Stage& derive = *fixit->Find("repairs");
  EXPECT_EQ(derive.params["num_turns"], 5);
  EXPECT_EQ(derive.params["eval"], "as-source") << "defaults are filled in";
  EXPECT_EQ(fixit->Find("failed")->experiments, std::vector<std::string>{"pipeline-base"});
}

TEST(PipelineTest, IdsChangeDownstreamOfAChangedParameterOnly) {
  absl::StatusOr<Pipeline> a = ReadPipeline(Small().dump(), "p.json");
  ASSERT_TRUE(a.ok()) << a.status();
  for (const Stage& s : a->stages) EXPECT_THAT(s.id, ::testing::MatchesRegex("st_[0-9a-f]{20}"));
  // The same stages written otherwise (a default spelled out, keys moved):
  // the same ids.
  Json same = Small();
  same["stages"][1] = Json::parse(R"({"prompt_tag": "t", "model": "m", "num_turns": 5,
      "kind": "derive", "name": "repairs", "from": "failed"})");
  absl::StatusOr<Pipeline> b = ReadPipeline(same.dump(), "p.json");
  ASSERT_TRUE(b.ok()) << b.status();
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(a->stages[i].id, b->stages[i].id) << i;
  // Another model in the middle stage: it and the one after change.
  Json changed = Small();
  changed["stages"][1]["model"] = "other";
  absl::StatusOr<Pipeline> c = ReadPipeline(changed.dump(), "p.json");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->stages[0].id, a->stages[0].id);
  EXPECT_NE(c->stages[1].id, a->stages[1].id);
  EXPECT_NE(c->stages[2].id, a->stages[2].id);
  // Another input experiment changes everything.
  Json input = Small();
  input["stages"][0]["experiments"] = {"other-base"};
  absl::StatusOr<Pipeline> d = ReadPipeline(input.dump(), "p.json");
  ASSERT_TRUE(d.ok());
  for (size_t i = 0; i < 3; ++i) EXPECT_NE(d->stages[i].id, a->stages[i].id) << i;
  // A stage's name is a label, not part of what it computes.
  Json renamed = Small();
  renamed["stages"][2]["name"] = "kernel-pairs";
  EXPECT_EQ(ReadPipeline(renamed.dump(), "p.json")->stages[2].id, a->stages[2].id);
}

// An evaluate stage's spec file is an input: edited in place, it gives that
// stage a new id (and no other); one that cannot be read names the stage.
TEST(PipelineTest, AnEvaluateStagesSpecContentIsPartOfItsId) {
  std::map<std::string, std::string> files = {{"base.json", "{\"a\": 1}"}};
  auto hash = [&files](const std::string& path) -> absl::StatusOr<std::string> {
    auto it = files.find(path);
    if (it == files.end()) return absl::NotFoundError(absl::StrCat("cannot read ", path));
    return Sha256Hex(it->second);
  };
  absl::StatusOr<Pipeline> a = ReadPipeline(Example("fixit"), "fixit", hash);
  ASSERT_TRUE(a.ok()) << a.status();
  files["base.json"] = "{\"a\": 2}";
  absl::StatusOr<Pipeline> b = ReadPipeline(Example("fixit"), "fixit", hash);
  ASSERT_TRUE(b.ok()) << b.status();
  for (size_t i = 0; i < a->stages.size(); ++i) {
    EXPECT_EQ(a->stages[i].id == b->stages[i].id, a->stages[i].kind != "evaluate") << i;
  }
  files.clear();
  absl::StatusOr<Pipeline> c = ReadPipeline(Example("fixit"), "fixit", hash);
  EXPECT_EQ(c.status().message(),
            "fixit: $.stages[6].spec: expected a spec file that can be read, found "
            "\"base.json\"; cannot read base.json");
}

// A stage's turns are bounded by the spec's own limit (experiment_spec/
// limits.h), so a pipeline never writes a spec the scheduler refuses for it.
TEST(PipelineTest, ItsTurnBoundsAreTheSpecs) {
  for (const auto& [stage, key] : {std::pair<int, const char*>{1, "num_turns"}, {0, "max_turn"}}) {
    Json at_limit = Small();
    at_limit["stages"][stage][key] = experiment_spec::kMaxTurns;
    EXPECT_TRUE(ReadPipeline(at_limit.dump(), "p.json").ok()) << key;
    Json past = Small();
    past["stages"][stage][key] = experiment_spec::kMaxTurns + 1;
    EXPECT_THAT(ErrorOf(past), HasSubstr(absl::StrCat("expected an integer from 0 to ",
                                                      experiment_spec::kMaxTurns)));
  }
}

TEST(PipelineTest, EachWiringMistakeIsOneErrorNamingTheStage) {
  struct Case {
    void (*mutate)(Json&);
    const char* error;  // the whole message, or a part of it
  };
  const Case cases[] = {
      {[](Json& p) { p["stages"][2]["kind"] = "train"; },
       "p.json: $.stages[2].kind: expected one of \"select\", \"derive\""},
      {[](Json& p) { p["stages"][2]["from"] = "repair"; },
       "p.json: $.stages[2].from: expected the name of an earlier stage, found \"repair\"; no "
       "stage has that name"},
      {[](Json& p) {
         p["stages"][1]["from"] = "pairs";
         p["stages"][2]["from"] = "failed";
       },
       "$.stages[1].from: expected the name of an earlier stage, found \"pairs\"; stages run in "
       "file order"},
      {[](Json& p) {
         p["stages"][0].erase("experiments");
         p["stages"][0]["from"] = "repairs";
       },
       "p.json: $.stages[0].from: expected a stage that does not take from this one, found "
       "\"repairs\"; a cycle: failed -> repairs -> failed"},
      {[](Json& p) { p["stages"][2]["from"] = "failed"; },
       "p.json: $.stages[2].from: expected a stage that makes an experiment, found \"failed\"; "
       "'failed' (select) makes a selection"},
      {[](Json& p) { p["stages"][1].erase("from"); },
       "$.stages[1].from: expected the stage it takes from"},
      {[](Json& p) {
         p["stages"][1].erase("from");
         p["stages"][1]["experiments"] = {"base"};
       },
       "$.stages[1].experiments: expected a known key"},
      {[](Json& p) { p["stages"][2]["name"] = "failed"; },
       "$.stages[2].name: expected a name no other stage has"},
      {[](Json& p) { p["stages"][1]["temperature"] = 1.0; }, "$.stages[1].temperature"},
      {[](Json& p) { p["stages"][1].erase("model"); }, "$.stages[1].model: expected a value"},
      {[](Json& p) { p["stages"][0]["statuses"] = {"COMPILE_ERROR", "PASSED"}; },
       "$.stages[0].statuses[1]: expected one of"},
      {[](Json& p) { p["stages"][0]["min_speedup"] = 1.0; },
       "$.stages[0].min_speedup: expected no min_speedup"},
      {[](Json& p) { p["stages"] = Json::array(); },
       "$.stages: expected a non-empty list of stages"},
      {[](Json& p) { p["stages"][1]["agent"] = "codex"; },
       "$.stages[1].agent: expected an object"},
      {[](Json& p) {
         p["stages"][1]["agent"] = {{"cli", "codex"}, {"token_budget", 1000}};
         p["stages"][1]["num_turns"] = 3;
       },
       "$.stages[1].num_turns: expected no num_turns with an agent, found 3; a session's "
       "evaluations are limited by agent.max_evaluations"},
  };
  for (const Case& c : cases) {
    Json pipeline = Small();
    c.mutate(pipeline);
    EXPECT_THAT(ErrorOf(pipeline), HasSubstr(c.error)) << pipeline.dump();
  }
  absl::StatusOr<Pipeline> malformed = ReadPipeline("{\"name\": ", "p.json");
  EXPECT_THAT(std::string(malformed.status().message()), HasSubstr("p.json: line 1"));
}

}  // namespace
}  // namespace ptxbench::pipelines
