#ifndef PTXBENCH_AGENTS_CLIS_H_
#define PTXBENCH_AGENTS_CLIS_H_

// Folder agents/: the coding-agent CLIs ptxbench runs in agent mode
// (docs/AGENTS.md), as data that the spec reader, the scheduler and the
// gateway share: which CLIs exist, the one version of each that ptxbench
// pins, the npm package it comes from, the model API ("wire") it speaks and
// what it can be told to leave out. The versions are the ones
// third_party/agent-clis/package.json installs; clis_test.cc holds the two
// equal. May include: common/.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ptxbench::agents {

// The model API a CLI speaks to its endpoint (the gateway's model proxy).
enum class Wire {
  kOpenAIResponses,    // POST /v1/responses, SSE
  kAnthropicMessages,  // POST /v1/messages, SSE
  kGeminiGenerate,     // POST /v1beta/models/M:streamGenerateContent?alt=sse
};

struct AgentCli {
  std::string name;         // as a spec names it: "codex", "claude-code", "gemini-cli"
  std::string version;      // the pinned version
  std::string npm_package;  // where the version comes from
  Wire wire;
  // Whether it can run with file tools only (no shell): Codex cannot drop its
  // shell tool.
  bool can_drop_shell;
  // The reasoning-effort values it takes; empty: it has no such setting.
  std::vector<std::string> efforts;
  // What runs, under the node_modules folder npm installs (x86-64 Linux):
  // Codex and Claude Code are native programs; Gemini CLI is a script for
  // Node >= 20.
  std::string executable;
  bool needs_node;
};

// Every CLI ptxbench runs, in a fixed order.
const std::vector<AgentCli>& PinnedAgentClis();
// nullptr for a name no entry has.
const AgentCli* FindAgentCli(absl::string_view name);
// "codex, claude-code, gemini-cli".
std::string AgentCliNames();

// "OpenAI Responses", "Anthropic Messages", "Gemini generateContent".
absl::string_view WireTitle(Wire wire);
// The registry's provider kind whose upstream API is `wire` ("openai",
// "anthropic", "gemini").
absl::string_view WireProvider(Wire wire);

}  // namespace ptxbench::agents

#endif  // PTXBENCH_AGENTS_CLIS_H_
