#include "agent_gateway/model_registry.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

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

TEST(ModelRegistryTest, MalformedEntriesNameFileModelAndField) {
  auto bad = [](const std::string& entry) {
    const std::string path = WriteTemp("bad.json", "{\"models\": {\"m\": " + entry + "}}");
    absl::Status s = ModelRegistry::Load({path}).status();
    EXPECT_FALSE(s.ok()) << entry;
    EXPECT_NE(s.message().find("model \"m\""), std::string::npos) << s;
    return std::string(s.message());
  };
  EXPECT_NE(bad(R"({"provider": "azure"})").find("provider"), std::string::npos);
  EXPECT_NE(bad(R"({"provider": "openai", "model_id": "x"})").find("base_url is required"),
            std::string::npos);
  EXPECT_NE(bad(R"({"provider": "scripted"})").find("answers_dir"), std::string::npos);
  EXPECT_NE(bad(R"({"provider": "scripted", "answers_dir": "d", "prise": {}})").find("prise"),
            std::string::npos);
  EXPECT_NE(bad(R"({"provider": "scripted", "answers_dir": "d", "price": {"input_per_mtok": -1}})")
                .find("price.input_per_mtok"),
            std::string::npos);
  EXPECT_FALSE(ModelRegistry::Load({WriteTemp("x.json", "[]")}).ok());
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
