#include "agents/clis.h"

#include "absl/strings/str_join.h"

namespace ptxbench::agents {

const std::vector<AgentCli>& PinnedAgentClis() {
  // Each version was run offline through a whole scripted session before it
  // was pinned (docs/AGENTS.md, "Pinned CLIs"); a new one is adopted the same
  // way, never by range.
  static const auto* clis = new std::vector<AgentCli>{
      {"codex", "0.171.0", "@openai/codex", Wire::kOpenAIResponses, /*can_drop_shell=*/false,
       {"minimal", "low", "medium", "high", "xhigh"},
       "@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex", /*needs_node=*/false},
      {"claude-code", "2.1.332", "@anthropic-ai/claude-code", Wire::kAnthropicMessages,
       /*can_drop_shell=*/true, {}, "@anthropic-ai/claude-code-linux-x64/claude",
       /*needs_node=*/false},
      {"gemini-cli", "0.61.0", "@google/gemini-cli", Wire::kGeminiGenerate,
       /*can_drop_shell=*/true, {}, "@google/gemini-cli/bundle/gemini.js", /*needs_node=*/true},
  };
  return *clis;
}

const AgentCli* FindAgentCli(absl::string_view name) {
  for (const AgentCli& cli : PinnedAgentClis()) {
    if (cli.name == name) return &cli;
  }
  return nullptr;
}

std::string AgentCliNames() {
  return absl::StrJoin(PinnedAgentClis(), ", ",
                       [](std::string* out, const AgentCli& c) { out->append(c.name); });
}

namespace {

struct WireNames {
  Wire wire;
  absl::string_view title;
  absl::string_view provider;
};
constexpr WireNames kWires[] = {
    {Wire::kOpenAIResponses, "OpenAI Responses", "openai"},
    {Wire::kAnthropicMessages, "Anthropic Messages", "anthropic"},
    {Wire::kGeminiGenerate, "Gemini generateContent", "gemini"},
};

const WireNames& NamesOf(Wire wire) {
  for (const WireNames& w : kWires) {
    if (w.wire == wire) return w;
  }
  return kWires[0];  // every enumerator is in the table
}

}  // namespace

absl::string_view WireTitle(Wire wire) { return NamesOf(wire).title; }
absl::string_view WireProvider(Wire wire) { return NamesOf(wire).provider; }

}  // namespace ptxbench::agents
