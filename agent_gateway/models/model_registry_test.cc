#include "agent_gateway/models/model_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"

namespace ptxbench::agent_gateway {
namespace {

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + std::to_string(getpid()) + "_" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(ModelRegistryTest, BundledFileLoadsAndUserFileOverridesByName) {
  const std::string user = WriteTemp("models.json", R"({"models": {
    "gpt-4.1": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model_id": "x",
                "price": {"input_per_mtok": 1, "output_per_mtok": 2}},
    "mine": {"provider": "scripted", "answers_dir": "/tmp/answers"}}})");
  auto r = ModelRegistry::Load({ModelRegistry::BundledFile(), user});
  ASSERT_TRUE(r.ok()) << r.status();
  auto gpt = (*r)->Find("gpt-4.1");
  ASSERT_TRUE(gpt.ok());
  EXPECT_EQ((*gpt)->base_url, "http://127.0.0.1:9/v1");
  EXPECT_EQ((*gpt)->api_key_env, "") << "whole entries are replaced";
  EXPECT_EQ((*(*r)->Find("mine"))->answers_dir, "/tmp/answers");
  auto claude = (*r)->Find("claude-sonnet-4");
  ASSERT_TRUE(claude.ok());
  EXPECT_EQ((*claude)->provider, "anthropic");
  EXPECT_EQ((*claude)->params.thinking_budget_tokens(), 16000);
  EXPECT_NE((*r)->Find("nope").status().message().find("unknown model \"nope\""), std::string::npos);
}

TEST(ModelRegistryTest, MalformedEntriesNameFileAndPath) {
  // The message after the file name: "$.models.m...: expected ..., found ...".
  auto bad = [](const std::string& entry) {
    const std::string path = WriteTemp("bad.json", "{\"models\": {\"m\": " + entry + "}}");
    absl::Status s = ModelRegistry::Load({path}).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << entry;
    EXPECT_TRUE(absl::StartsWith(s.message(), path + ": ")) << s;
    return std::string(s.message().substr(std::min(s.message().size(), path.size() + 2)));
  };
  EXPECT_EQ(bad(R"({"provider": "azure"})"),
            "$.models.m.provider: expected one of \"openai\", \"anthropic\", \"gemini\", "
            "\"scripted\", found \"azure\"");
  EXPECT_EQ(bad(R"({"provider": "openai", "model_id": "x"})"),
            "$.models.m.base_url: expected a value (the key is required), found nothing");
  EXPECT_EQ(bad(R"({"provider": "scripted"})"),
            "$.models.m.answers_dir: expected a value (the key is required), found nothing");
  EXPECT_THAT(bad(R"({"provider": "scripted", "answers_dir": "d", "prise": {}})"),
              ::testing::StartsWith("$.models.m.prise: expected a known key (provider, "));
  EXPECT_EQ(bad(R"({"provider": "scripted", "answers_dir": "d", "price": {"input_per_mtok": -1}})"),
            "$.models.m.price.input_per_mtok: expected a number of at least 0, found -1");
  EXPECT_EQ(bad(R"({"provider": "scripted", "answers_dir": "d", "limits": []})"),
            "$.models.m.limits: expected an object, found []");
  EXPECT_EQ(bad(R"({"provider": "scripted", "answers_dir": 7})"),
            "$.models.m.answers_dir: expected a string, found 7");
  EXPECT_EQ(bad(R"({"provider": "scripted", "answers_dir": "d", "provider": "openai"})"),
            "$.models.m.provider: expected each key once per object, found \"openai\"; the key "
            "is given more than once");
  EXPECT_EQ(bad("[]"), "$.models.m: expected an object, found []");
  // Model names that are not plain keys are quoted in the path.
  const std::string dotted =
      WriteTemp("dotted.json", R"({"models": {"gpt-4.1": {"provider": 1}}})");
  EXPECT_THAT(std::string(ModelRegistry::Load({dotted}).status().message()),
              ::testing::HasSubstr(": $.models[\"gpt-4.1\"].provider: expected one of"));
  EXPECT_EQ(ModelRegistry::Load({WriteTemp("x.json", "[]")}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ModelRegistry::Load({WriteTemp("y.json", "{\"model\": {}}")}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ModelRegistry::Load({"/no/such/file.json"}).status().code(), absl::StatusCode::kNotFound);
}

TEST(ModelRegistryTest, CostSplitsCachedInputAndReasoningOutput) {
  ModelPrice p{2.0, 8.0, -1, 0.5};
  ptxbench::v1::Usage u;
  u.set_input_tokens(1'000'000);
  u.set_cached_tokens(400'000);
  u.set_output_tokens(500'000);
  u.set_reasoning_tokens(200'000);
  // 0.6M input at $2 + 0.4M cached at $0.5 + 0.5M output (reasoning billed as output) at $8.
  EXPECT_NEAR(CostUsd(p, u), 1.2 + 0.2 + 4.0, 1e-9);
  p.reasoning_per_mtok = 0;
  EXPECT_NEAR(CostUsd(p, u), 1.2 + 0.2 + 2.4, 1e-9);
}

}  // namespace
}  // namespace ptxbench::agent_gateway
