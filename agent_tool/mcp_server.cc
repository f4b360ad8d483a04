#include "agent_tool/mcp_server.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/hash.h"
#include "common/utf8.h"
#include "nlohmann/json.hpp"

namespace ptxbench::agent_tool {
namespace {

using Json = nlohmann::json;

// JSON-RPC 2.0 error codes.
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;

std::string Line(const Json& message) {
  return message.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string Result(const Json& id, Json result) {
  return Line({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

std::string Failure(const Json& id, int code, const std::string& message) {
  return Line({{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}});
}

Json Tool(const char* name, const char* description) {
  return {{"name", name},
          {"description", description},
          {"inputSchema",
           {{"type", "object"}, {"properties", Json::object()}, {"additionalProperties", false}}}};
}

}  // namespace

const std::vector<std::string>& McpServer::ProtocolVersions() {
  static const auto* versions =
      new std::vector<std::string>{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"};
  return *versions;
}

absl::StatusOr<std::string> ReadAgentFile(const std::string& path, size_t max) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("there is no file ", path));
  std::string text;
  char chunk[1 << 16];
  // In chunks, so a limit far above the file's size costs nothing.
  while (text.size() <= max && in.read(chunk, sizeof(chunk)).gcount() > 0) {
    text.append(chunk, static_cast<size_t>(in.gcount()));
  }
  if (text.size() > max) {
    return absl::OutOfRangeError(absl::StrCat(path, " is larger than ", max, " bytes"));
  }
  return text;
}

absl::StatusOr<std::string> ReadKernelFile(const std::string& path) {
  absl::StatusOr<std::string> source = ReadAgentFile(path, kMaxSource);
  if (!source.ok()) return source.status();
  if (const std::string bad = DescribeInvalidUtf8(*source); !bad.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is not UTF-8 text: ", bad, "; a kernel is UTF-8 source"));
  }
  return source;
}

McpServer::ToolResult McpServer::FromReply(const absl::StatusOr<EvalReply>& reply) const {
  if (!reply.ok()) {
    return {absl::StrCat("PTXBENCH_INFRA_ERROR: the evaluation service did not answer (",
                         reply.status().message(), ")"),
            true};
  }
  return {reply->text, reply->exit_code >= 2};
}

McpServer::ToolResult McpServer::EvaluateKernel(bool profile) {
  absl::StatusOr<std::string> source = ReadKernelFile(config_.kernel_path);
  if (!source.ok()) {
    return {absl::StrCat("nothing was evaluated: ", source.status().message(),
                         absl::IsInvalidArgument(source.status()) ? "; fix the file"
                                                                  : "; write the kernel there",
                         ", then call ",
                         profile ? "profile_kernel" : "evaluate_kernel", " again"),
            true};
  }
  absl::StatusOr<std::string> workload = ReadAgentFile(config_.workload_path, 64 << 20);
  if (!workload.ok()) {
    return {absl::StrCat("PTXBENCH_INFRA_ERROR: the task file is unreadable (",
                         workload.status().message(), ")"),
            true};
  }
  EvalRequest request;
  request.action_id = new_action_id_();
  request.source = *std::move(source);
  request.workload_sha256 = Sha256Hex(*workload);
  request.profile = profile;
  return FromReply(exchange_(request));
}

McpServer::ToolResult McpServer::BudgetStatus() {
  EvalRequest request;
  request.op = EvalRequest::Op::kBudget;
  return FromReply(exchange_(request));
}

std::string McpServer::Handle(absl::string_view line) {
  const Json message = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (message.is_discarded()) return Failure(nullptr, kParseError, "Parse error");
  if (!message.is_object() || !message.contains("method") || !message["method"].is_string()) {
    // A response to a request of ours (we send none) or garbage.
    if (message.is_object() && !message.contains("method") && message.contains("id")) return "";
    return Failure(message.is_object() ? message.value("id", Json()) : Json(), kInvalidRequest,
                   "Invalid Request");
  }
  const std::string method = message["method"];
  if (!message.contains("id")) return "";  // a notification: nothing to answer
  const Json& id = message["id"];
  const Json params = message.value("params", Json::object());
  if (method == "initialize") {
    std::string version = ProtocolVersions().back();
    if (params.is_object() && params.contains("protocolVersion") &&
        params["protocolVersion"].is_string()) {
      for (const std::string& v : ProtocolVersions()) {
        if (v == params["protocolVersion"]) version = v;
      }
    }
    return Result(id, {{"protocolVersion", version},
                       {"capabilities", {{"tools", {{"listChanged", false}}}}},
                       {"serverInfo", {{"name", "ptxbench"}, {"version", "1"}}}});
  }
  if (method == "ping") return Result(id, Json::object());
  if (method == "tools/list") {
    Json tools = Json::array({Tool("evaluate_kernel",
                       "Compiles, checks and times the kernel in your workspace on ptxbench's "
                       "GPUs against the task's workloads, and returns the results. One "
                       "evaluation at a time; each one counts towards your evaluation budget.")});
    if (config_.profile) {
      tools.push_back(Tool("profile_kernel",
                           "Evaluates the kernel in your workspace like evaluate_kernel, then "
                           "profiles it with Nsight Compute on the largest workload and adds "
                           "where its time went (throughput against peak, occupancy, cache hit "
                           "rates, warp stalls, per kernel) to the results. Counts as an "
                           "evaluation; takes longer than evaluate_kernel."));
    }
    tools.push_back(Tool("budget_status", "What is left of this session's budgets."));
    return Result(id, {{"tools", std::move(tools)}});
  }
  if (method == "tools/call") {
    const std::string name =
        params.is_object() && params.contains("name") && params["name"].is_string()
            ? params["name"].get<std::string>()
            : "";
    ToolResult r;
    if (name == "evaluate_kernel") {
      r = EvaluateKernel(/*profile=*/false);
    } else if (name == "profile_kernel" && config_.profile) {
      r = EvaluateKernel(/*profile=*/true);
    } else if (name == "budget_status") {
      r = BudgetStatus();
    } else {
      return Failure(id, kInvalidParams, absl::StrCat("unknown tool '", name, "'"));
    }
    return Result(id, {{"content", {{{"type", "text"}, {"text", r.text}}}}, {"isError", r.is_error}});
  }
  return Failure(id, kMethodNotFound, absl::StrCat("Method not found: ", method));
}

void McpServer::Serve(std::istream& in, std::ostream& out) {
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const std::string answer = Handle(line);
    if (!answer.empty()) out << answer << std::flush;
  }
}

}  // namespace ptxbench::agent_tool
