// The model proxy's wire helpers (model_proxy_wire.h).
#include "agent_gateway/agent/model_proxy_wire.h"

#include <sys/socket.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace ptxbench::agent_gateway::proxy_internal {
namespace {

using Json = nlohmann::json;

const char* Reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 413: return "Payload Too Large";
    case 415: return "Unsupported Media Type";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    default: return "Status";
  }
}

}  // namespace

std::string ErrorBody(agents::Wire wire, int status, const std::string& message) {
  Json body;
  switch (wire) {
    case agents::Wire::kAnthropicMessages:
      body = {{"type", "error"}, {"error", {{"type", "invalid_request_error"}, {"message", message}}}};
      break;
    case agents::Wire::kOpenAIResponses:
      body = {{"error", {{"message", message}, {"type", "invalid_request_error"}, {"code", "ptxbench"}}}};
      break;
    case agents::Wire::kGeminiGenerate:
      body = {{"error", {{"code", status}, {"message", message}, {"status", "INVALID_ARGUMENT"}}}};
      break;
  }
  return body.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string HttpHead(int status, absl::string_view content_type) {
  return absl::StrCat("HTTP/1.1 ", status, " ", Reason(status), "\r\nContent-Type: ", content_type,
                      "\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
}

bool WriteAll(int fd, absl::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool WriteChunk(int fd, absl::string_view bytes) {
  if (bytes.empty()) return true;
  return WriteAll(fd, absl::StrCat(absl::Hex(bytes.size()), "\r\n", bytes, "\r\n"));
}

void FinishRelay(int fd, Answered& a) {
  if (fd < 0 || a.client_gone) return;
  if (!a.head_sent) {
    a.head_sent = true;
    if (!WriteAll(fd, HttpHead(a.status, a.content_type))) return;
  }
  if (!a.sse && !a.passing && !WriteChunk(fd, a.body)) return;
  (void)WriteAll(fd, "0\r\n\r\n");
}

std::string CounterBody(agents::Wire wire, const std::string& model, const StrictJson& body) {
  StrictJson out = StrictJson::object();
  auto keep = [&](StrictJson& into, std::initializer_list<const char*> keys) {
    for (const char* key : keys) {
      auto it = body.find(key);
      if (it != body.end()) into[key] = *it;
    }
  };
  switch (wire) {
    case agents::Wire::kAnthropicMessages:
      out["model"] = model;
      keep(out, {"messages", "system", "tools", "tool_choice", "thinking"});
      break;
    case agents::Wire::kOpenAIResponses:
      out["model"] = model;
      keep(out, {"input", "instructions", "tools", "tool_choice", "parallel_tool_calls",
                 "reasoning", "text", "truncation"});
      break;
    case agents::Wire::kGeminiGenerate: {
      StrictJson request = StrictJson::object();
      request["model"] = absl::StrCat("models/", model);
      keep(request, {"contents", "systemInstruction", "tools", "toolConfig"});
      out["generateContentRequest"] = std::move(request);
      break;
    }
  }
  return out.dump(-1, ' ', false, StrictJson::error_handler_t::replace);
}

std::optional<int64_t> CountedTokens(agents::Wire wire, absl::string_view answer) {
  const Json j = Json::parse(answer, nullptr, /*allow_exceptions=*/false);
  const char* key = wire == agents::Wire::kGeminiGenerate ? "totalTokens" : "input_tokens";
  if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer()) return std::nullopt;
  const int64_t tokens = j[key].get<int64_t>();
  if (tokens < 0) return std::nullopt;
  return tokens;
}

}  // namespace ptxbench::agent_gateway::proxy_internal
