#include "agent_gateway/agent/session_record.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "nlohmann/json.hpp"

namespace ptxbench::agent_gateway {
namespace {

namespace fs = std::filesystem;
namespace v1 = ::ptxbench::v1;
using Json = nlohmann::json;

constexpr size_t kEvents = 8 << 20;
constexpr size_t kStderr = 1 << 20;
constexpr size_t kCalls = 4 << 20;
constexpr size_t kCallBody = 256 << 10;
constexpr size_t kHome = 2 << 20;
constexpr size_t kWorkspaceFile = 256 << 10;
constexpr size_t kWorkspace = 1 << 20;

v1::AgentRecord Record(std::string name, std::string content, bool truncated) {
  v1::AgentRecord r;
  r.set_name(std::move(name));
  r.set_content(std::move(content));
  r.set_truncated(truncated);
  return r;
}

std::string Capped(const std::string& text, size_t cap) { return text.substr(0, cap); }

const char* CallKindName(ModelProxy::CallKind kind) {
  switch (kind) {
    case ModelProxy::CallKind::kModel: return "model";
    case ModelProxy::CallKind::kTokenCount: return "token_count";
    case ModelProxy::CallKind::kAdmissionCount: return "admission_count";
    case ModelProxy::CallKind::kRefused: return "refused";
  }
  return "refused";
}

std::string CallsJsonl(const std::vector<ModelProxy::Call>& calls, bool* truncated) {
  std::string out;
  for (const ModelProxy::Call& c : calls) {
    Json line = {{"started_unix_ms", c.started_unix_ms},
                 {"latency_ms", c.latency_ms},
                 {"kind", CallKindName(c.kind)},
                 {"target", c.target},
                 {"status", c.status},
                 {"refused", c.refused},
                 {"edits", c.edits},
                 {"input_tokens", c.usage.input_tokens()},
                 {"output_tokens", c.usage.output_tokens()},
                 {"reasoning_tokens", c.usage.reasoning_tokens()},
                 {"cached_tokens", c.usage.cached_tokens()},
                 {"cost_usd", c.cost_usd},
                 {"reserved_tokens", c.reserved_tokens},
                 {"charged_reservation", c.charged_reservation}};
    if (out.size() < kCalls) {
      line["request"] = Capped(c.request, kCallBody);
      line["response"] = Capped(c.response, kCallBody);
      line["bodies_truncated"] =
          c.request.size() > kCallBody || c.response.size() > kCallBody || c.bodies_truncated;
    } else {
      *truncated = true;  // the line without its bodies
    }
    out += line.dump(-1, ' ', false, Json::error_handler_t::replace);
    out += '\n';
  }
  return out;
}

// The regular files under `dir` that `keep` accepts, as records named
// `prefix` + their relative path, up to `each` bytes each and `total` in all.
void AddFiles(const std::string& dir, const std::string& prefix, size_t each, size_t total,
              bool (*keep)(const fs::path&), std::vector<v1::AgentRecord>* out) {
  std::error_code ec;
  size_t used = 0;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied,
                                           ec), end;
       !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec) || it->is_symlink(ec) || !keep(it->path())) continue;
    const size_t size = static_cast<size_t>(it->file_size(ec));
    if (ec || used >= total) continue;
    std::ifstream in(it->path(), std::ios::binary);
    std::string content(std::min({size, each, total - used}), '\0');
    in.read(content.data(), static_cast<std::streamsize>(content.size()));
    content.resize(static_cast<size_t>(in.gcount()));
    used += content.size();
    out->push_back(Record(prefix + fs::relative(it->path(), dir).string(), std::move(content),
                          size > each || used >= total));
  }
}

bool SessionFile(const fs::path& p) {
  const std::string name = p.filename().string();
  // Its own transcripts, not the settings ptxbench wrote.
  return (absl::EndsWith(name, ".jsonl") || absl::EndsWith(name, ".json")) &&
         name != "settings.json" && name != "mcp.json";
}

bool Any(const fs::path&) { return true; }

}  // namespace

std::vector<v1::AgentRecord> SessionRecords(const SessionOutput& output,
                                            const std::vector<ModelProxy::Call>& calls,
                                            const std::string& home,
                                            const std::string& workspace) {
  std::vector<v1::AgentRecord> records;
  records.push_back(Record("events.jsonl", Capped(output.events, kEvents),
                           output.events_dropped > 0 || output.events.size() > kEvents));
  const std::string& err = output.stderr_text;
  records.push_back(Record("stderr.txt", err.substr(err.size() > kStderr ? err.size() - kStderr : 0),
                           output.stderr_dropped > 0 || err.size() > kStderr));
  bool calls_truncated = false;
  std::string calls_jsonl = CallsJsonl(calls, &calls_truncated);
  records.push_back(Record("model_calls.jsonl", std::move(calls_jsonl), calls_truncated));
  AddFiles(home, "home/", kHome, kHome, SessionFile, &records);
  AddFiles(workspace, "workspace/", kWorkspaceFile, kWorkspace, Any, &records);
  return records;
}

}  // namespace ptxbench::agent_gateway
