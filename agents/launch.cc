// How each pinned CLI is started for a session (launch.h). The settings
// below are the ones a whole scripted session was run with offline for each
// pinned version (tests/agent_cli_test.cc).
#include "agents/launch.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file.h"
#include "nlohmann/json.hpp"

namespace ptxbench::agents {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// common/file.h's WriteFile, in a folder made first.
absl::Status WriteFile(const fs::path& path, const std::string& text) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  return ptxbench::WriteFile(path.string(), text);
}

std::string Url(const LaunchOptions& o) { return absl::StrCat("http://127.0.0.1:", o.model_port); }

int64_t TimeoutMs(const LaunchOptions& o) { return absl::ToInt64Milliseconds(o.tool_timeout); }

// The MCP server entry every CLI's configuration names.
Json McpServer(const LaunchOptions& o) {
  return {{"command", o.tool_binary},
          {"args", {"mcp"}},
          {"env", {{"PTXBENCH_AGENT_TOOL_CONFIG", o.tool_config}}}};
}

absl::StatusOr<Launch> ClaudeCode(const LaunchOptions& o) {
  Json server = McpServer(o);
  server["type"] = "stdio";
  server["timeout"] = TimeoutMs(o);
  const fs::path mcp = fs::path(o.home) / "mcp.json";
  if (absl::Status s = WriteFile(mcp, Json{{"mcpServers", {{"ptxbench", server}}}}.dump());
      !s.ok()) {
    return s;
  }
  std::vector<std::string> tools = {"Read", "Write", "Edit"};
  if (o.shell) tools.push_back("Bash");
  tools.push_back("mcp__ptxbench__evaluate_kernel");
  tools.push_back("mcp__ptxbench__budget_status");
  Launch l;
  l.env = {absl::StrCat("PATH=", o.path), absl::StrCat("HOME=", o.home),
           absl::StrCat("ANTHROPIC_BASE_URL=", Url(o)),
           absl::StrCat("ANTHROPIC_API_KEY=", kSessionKey),
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
           absl::StrCat("MCP_TOOL_TIMEOUT=", TimeoutMs(o))};
  l.argv = {o.program, "-p", o.prompt, "--output-format", "stream-json", "--verbose",
            "--model", o.model, "--mcp-config", mcp.string(), "--strict-mcp-config",
            "--allowedTools", absl::StrJoin(tools, ","), "--disallowedTools",
            "WebSearch,WebFetch", "--permission-mode", "dontAsk"};
  l.end_event = "\"type\":\"result\"";
  return l;
}

absl::StatusOr<Launch> Codex(const LaunchOptions& o) {
  std::string config = absl::StrCat(
      "model = \"", o.model, "\"\nmodel_provider = \"ptxb\"\napproval_policy = \"never\"\n",
      // The session's sandbox is ptxbench's: Codex's own would need
      // namespaces the session does not have.
      "sandbox_mode = \"danger-full-access\"\nweb_search = \"disabled\"\n"
      "check_for_update_on_startup = false\n");
  if (!o.effort.empty()) absl::StrAppend(&config, "model_reasoning_effort = \"", o.effort, "\"\n");
  absl::StrAppend(
      &config, "\n[model_providers.ptxb]\nname = \"ptxb\"\nbase_url = \"", Url(o),
      "/v1\"\nenv_key = \"PTXB_AGENT_KEY\"\nwire_api = \"responses\"\n\n"
      "[mcp_servers.ptxbench]\ncommand = \"", o.tool_binary,
      "\"\nargs = [\"mcp\"]\nenv = { PTXBENCH_AGENT_TOOL_CONFIG = \"", o.tool_config,
      "\" }\nrequired = true\nstartup_timeout_sec = 10\ntool_timeout_sec = ",
      absl::ToInt64Seconds(o.tool_timeout), "\ndefault_tools_approval_mode = \"approve\"\n");
  const fs::path codex_home = fs::path(o.home) / ".codex";
  if (absl::Status s = WriteFile(codex_home / "config.toml", config); !s.ok()) return s;
  Launch l;
  l.env = {absl::StrCat("PATH=", o.path), absl::StrCat("HOME=", o.home),
           absl::StrCat("CODEX_HOME=", codex_home.string()),
           absl::StrCat("PTXB_AGENT_KEY=", kSessionKey)};
  l.argv = {o.program, "exec", "--json", "--skip-git-repo-check", "-C", o.workspace, o.prompt};
  l.end_event = "\"type\":\"turn.completed\"";
  return l;
}

absl::StatusOr<Launch> GeminiCli(const LaunchOptions& o) {
  Json server = McpServer(o);
  server["trust"] = true;
  server["timeout"] = TimeoutMs(o);
  Json exclude = {"google_web_search", "web_fetch"};
  if (!o.shell) exclude.push_back("run_shell_command");
  const Json settings = {{"mcpServers", {{"ptxbench", server}}},
                         {"security", {{"auth", {{"selectedType", "gemini-api-key"}}}}},
                         {"telemetry", {{"enabled", false}}},
                         {"privacy", {{"usageStatisticsEnabled", false}}},
                         {"tools", {{"exclude", exclude}}}};
  if (absl::Status s = WriteFile(fs::path(o.home) / ".gemini/settings.json", settings.dump());
      !s.ok()) {
    return s;
  }
  Launch l;
  l.env = {absl::StrCat("PATH=", o.path), absl::StrCat("HOME=", o.home),
           absl::StrCat("GEMINI_API_KEY=", kSessionKey),
           absl::StrCat("GOOGLE_GEMINI_BASE_URL=", Url(o))};
  l.argv = {"node", o.program, "-p", o.prompt, "-m", o.model, "--output-format", "stream-json",
            "--yolo", "--skip-trust"};
  l.end_event = "\"type\":\"result\"";
  return l;
}

}  // namespace

absl::StatusOr<Launch> PrepareLaunch(const LaunchOptions& o) {
  if (o.cli == nullptr || o.program.empty() || o.tool_binary.empty() || o.workspace.empty() ||
      o.home.empty() || o.tool_config.empty() || o.model_port <= 0 || o.model.empty()) {
    return absl::InvalidArgumentError(
        "a launch needs the CLI, its program, the tool binary, the workspace, home, tool "
        "configuration, model port and model");
  }
  switch (o.cli->wire) {
    case Wire::kAnthropicMessages: return ClaudeCode(o);
    case Wire::kOpenAIResponses: return Codex(o);
    case Wire::kGeminiGenerate: return GeminiCli(o);
  }
  return absl::InvalidArgumentError(absl::StrCat("no launch for ", o.cli->name));
}

}  // namespace ptxbench::agents
