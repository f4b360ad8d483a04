#include "agents/clis.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "nlohmann/json.hpp"

namespace ptxbench::agents {
namespace {

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

// What setup installs is what the spec reader accepts: the pins in code, the
// package.json and its lock agree, CLI by CLI.
TEST(AgentClis, ThePinsAreWhatSetupInstalls) {
  const std::string dir = std::string(PTXB_SOURCE_DIR) + "/third_party/agent-clis/";
  const nlohmann::json package = ReadJson(dir + "package.json");
  const nlohmann::json lock = ReadJson(dir + "package-lock.json");
  ASSERT_EQ(package["dependencies"].size(), PinnedAgentClis().size());
  for (const AgentCli& cli : PinnedAgentClis()) {
    SCOPED_TRACE(cli.name);
    ASSERT_TRUE(package["dependencies"].contains(cli.npm_package));
    // An exact version, never a range.
    EXPECT_EQ(package["dependencies"][cli.npm_package], cli.version);
    const nlohmann::json& locked = lock["packages"]["node_modules/" + cli.npm_package];
    EXPECT_EQ(locked["version"], cli.version);
    EXPECT_FALSE(locked.value("integrity", "").empty());
  }
}

TEST(AgentClis, FoundByNameWithTheirWires) {
  ASSERT_NE(FindAgentCli("codex"), nullptr);
  EXPECT_EQ(FindAgentCli("codex")->wire, Wire::kOpenAIResponses);
  EXPECT_FALSE(FindAgentCli("codex")->can_drop_shell);
  EXPECT_EQ(WireProvider(FindAgentCli("claude-code")->wire), "anthropic");
  EXPECT_EQ(WireTitle(FindAgentCli("gemini-cli")->wire), "Gemini generateContent");
  EXPECT_EQ(FindAgentCli("agy"), nullptr);
  EXPECT_EQ(AgentCliNames(), "codex, claude-code, gemini-cli");
}

}  // namespace
}  // namespace ptxbench::agents
