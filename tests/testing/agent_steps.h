#ifndef PTXBENCH_TESTS_TESTING_AGENT_STEPS_H_
#define PTXBENCH_TESTS_TESTING_AGENT_STEPS_H_

// What the end-to-end agent tests (tests/agent_e2e_test.cc,
// agent_triton_e2e_test.cc) share: whether a pinned CLI's session can run
// here, and the scripted model's side of the simplest session, in each CLI's
// own tools (docs/AGENTS.md, "Facts of the pinned CLIs"): write the kernel
// file, call the evaluate tool, then finish with text.

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "agents/clis.h"
#include "common/data_dir.h"
#include "nlohmann/json.hpp"
#include "testing/scripted_model.h"

namespace ptxbench::testing {

// Why a session of `cli` cannot run here ("" when it can): the CLI is not
// installed, or this is not root (a session's sandbox runs it as a uid of
// its own).
inline std::string WhyNoSession(const agents::AgentCli& cli) {
  if (!std::filesystem::exists(std::filesystem::path(DataDir()) /
                               "third_party/agent-clis/node_modules" / cli.executable)) {
    return absl::StrCat(cli.name, " is not installed (scripts/setup.sh installs it)");
  }
  if (geteuid() != 0) return "a session's sandbox runs it as its own uid: needs root";
  return "";
}

// The registry entry of a scripted model on 127.0.0.1:`port` in the API
// `cli` speaks (its model id "pinned-model"), for a gateway's --models.
inline nlohmann::json ScriptedAgentModel(const agents::AgentCli& cli, int port) {
  const char* suffix = cli.wire == agents::Wire::kGeminiGenerate    ? "/v1beta"
                       : cli.wire == agents::Wire::kOpenAIResponses ? "/v1"
                                                                    : "";
  return {{"provider", std::string(agents::WireProvider(cli.wire))},
          {"base_url", absl::StrCat("http://127.0.0.1:", port, suffix)},
          {"model_id", "pinned-model"}};
}

// `file` (kernel.cu, kernel.py) written with `content` in the session's
// `workspace` (where the CLI starts: Codex's shell writes it there by name),
// then one evaluation.
inline std::vector<ScriptedModel::Step> WriteAndEvaluate(const agents::AgentCli& cli,
                                                         const std::string& workspace,
                                                         const std::string& file,
                                                         const std::string& content) {
  if (cli.name == "codex") {
    return {{"exec_command",
             {{"cmd", absl::StrCat("printf %s '", absl::Base64Escape(content), "' | base64 -d > ",
                                   file)}}},
            {"evaluate_kernel", nlohmann::json::object(), "", "mcp__ptxbench"}};
  }
  const bool gemini = cli.name == "gemini-cli";
  return {{gemini ? "write_file" : "Write",
           {{"file_path", workspace + "/" + file}, {"content", content}}},
          {gemini ? "mcp_ptxbench_evaluate_kernel" : "mcp__ptxbench__evaluate_kernel"}};
}

}  // namespace ptxbench::testing

#endif  // PTXBENCH_TESTS_TESTING_AGENT_STEPS_H_
