#include "agent_tool/eval_wire.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/json_reader.h"
#include "common/status_macros.h"

namespace ptxbench::agent_tool {
namespace {

using Json = StrictJson;

bool IsActionId(absl::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  }
  return true;
}

bool IsSha256(absl::string_view hex) {
  if (hex.size() != 64) return false;
  for (char c : hex) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c)) && (c < 'a' || c > 'f')) return false;
  }
  return true;
}

// Waits until `fd` is readable or writable (`events`), within `deadline`.
absl::Status Wait(int fd, short events, absl::Time deadline) {
  for (;;) {
    const int64_t ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (ms <= 0) return absl::DeadlineExceededError("the other end did not answer in time");
    pollfd p{fd, events, 0};
    const int n = poll(&p, 1, static_cast<int>(std::min<int64_t>(ms, 1 << 30)));
    if (n > 0) return absl::OkStatus();
    if (n < 0 && errno != EINTR) return absl::UnavailableError(absl::StrCat("poll: errno ", errno));
  }
}

absl::Status ReadExactly(int fd, char* out, size_t n, absl::Time deadline) {
  size_t done = 0;
  while (done < n) {
    PTXB_RETURN_IF_ERROR(Wait(fd, POLLIN, deadline));
    const ssize_t r = read(fd, out + done, n - done);
    if (r == 0) return absl::UnavailableError("the other end closed the connection");
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return absl::UnavailableError(absl::StrCat("read: errno ", errno));
    }
    done += static_cast<size_t>(r);
  }
  return absl::OkStatus();
}

}  // namespace

std::string EncodeRequest(const EvalRequest& request) {
  nlohmann::json j;
  if (request.op == EvalRequest::Op::kBudget) {
    j["op"] = "budget";
  } else {
    j = {{"op", "evaluate"},
         {"action_id", request.action_id},
         {"source", request.source},
         {"workload_sha256", request.workload_sha256}};
    if (request.profile) j["profile"] = true;
  }
  // Never throws: the tool refuses a source that is not UTF-8 before it
  // gets here (ReadKernelFile), and the gateway refuses one that comes
  // another way; replacing is the last guard, not the rule.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

absl::StatusOr<EvalRequest> ParseRequest(absl::string_view text) {
  const JsonReader r("evaluate request");
  PTXB_ASSIGN_OR_RETURN(Json j, ParseStrictJson(text, "evaluate request"));
  PTXB_RETURN_IF_ERROR(r.RequireObject(j, ""));
  PTXB_ASSIGN_OR_RETURN(const Json* op, r.Required(j, "", "op"));
  PTXB_ASSIGN_OR_RETURN(std::string op_name, r.Enum(*op, "op", {"evaluate", "budget"}));
  EvalRequest out;
  if (op_name == "budget") {
    PTXB_RETURN_IF_ERROR(r.CheckKeys(j, "", {"op"}, /*allow_comments=*/false));
    out.op = EvalRequest::Op::kBudget;
    return out;
  }
  PTXB_RETURN_IF_ERROR(
      r.CheckKeys(j, "", {"op", "action_id", "source", "workload_sha256", "profile"}, false));
  PTXB_ASSIGN_OR_RETURN(const Json* id, r.Required(j, "", "action_id"));
  PTXB_ASSIGN_OR_RETURN(out.action_id, r.String(*id, "action_id"));
  if (!IsActionId(out.action_id)) return r.Error("action_id", *id, "[A-Za-z0-9_-]{1,64}");
  PTXB_ASSIGN_OR_RETURN(const Json* source, r.Required(j, "", "source"));
  PTXB_ASSIGN_OR_RETURN(out.source, r.String(*source, "source", /*allow_empty=*/true));
  if (out.source.size() > kMaxSource) {
    return r.ErrorFound("source", absl::StrCat(out.source.size(), " bytes"),
                        absl::StrCat("a kernel of at most ", kMaxSource, " bytes"));
  }
  PTXB_ASSIGN_OR_RETURN(const Json* sha, r.Required(j, "", "workload_sha256"));
  PTXB_ASSIGN_OR_RETURN(out.workload_sha256, r.String(*sha, "workload_sha256"));
  if (!IsSha256(out.workload_sha256)) {
    return r.Error("workload_sha256", *sha, "64 lowercase hex digits");
  }
  if (const Json* profile = JsonReader::Member(j, "profile")) {
    PTXB_ASSIGN_OR_RETURN(out.profile, r.Boolean(*profile, "profile"));
  }
  return out;
}

std::string EncodeReply(const EvalReply& reply) {
  return nlohmann::json{{"exit_code", reply.exit_code}, {"text", reply.text}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
}

absl::StatusOr<EvalReply> ParseReply(absl::string_view text) {
  const JsonReader r("evaluate reply");
  PTXB_ASSIGN_OR_RETURN(Json j, ParseStrictJson(text, "evaluate reply"));
  PTXB_RETURN_IF_ERROR(r.RequireObject(j, ""));
  PTXB_RETURN_IF_ERROR(r.CheckKeys(j, "", {"exit_code", "text"}, false));
  EvalReply out;
  PTXB_ASSIGN_OR_RETURN(const Json* code, r.Required(j, "", "exit_code"));
  PTXB_ASSIGN_OR_RETURN(int64_t exit_code, r.Integer(*code, "exit_code", 0, 2));
  out.exit_code = static_cast<int>(exit_code);
  PTXB_ASSIGN_OR_RETURN(const Json* t, r.Required(j, "", "text"));
  PTXB_ASSIGN_OR_RETURN(out.text, r.String(*t, "text", /*allow_empty=*/true));
  if (out.text.size() > kMaxText) out.text.resize(kMaxText);
  return out;
}

absl::Status WriteFrame(int fd, absl::string_view payload) {
  const uint32_t n = static_cast<uint32_t>(payload.size());
  std::string frame = {static_cast<char>(n >> 24), static_cast<char>(n >> 16),
                       static_cast<char>(n >> 8), static_cast<char>(n)};
  frame.append(payload.data(), payload.size());
  size_t done = 0;
  while (done < frame.size()) {
    // MSG_NOSIGNAL: a peer that went away is an error here, not a SIGPIPE.
    const ssize_t w = send(fd, frame.data() + done, frame.size() - done, MSG_NOSIGNAL);
    if (w < 0 && errno == ENOTSOCK) {
      const ssize_t v = write(fd, frame.data() + done, frame.size() - done);
      if (v < 0) return absl::UnavailableError(absl::StrCat("write: errno ", errno));
      done += static_cast<size_t>(v);
      continue;
    }
    if (w < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(absl::StrCat("send: errno ", errno));
    }
    done += static_cast<size_t>(w);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFrame(int fd, size_t max, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  unsigned char header[4];
  PTXB_RETURN_IF_ERROR(ReadExactly(fd, reinterpret_cast<char*>(header), 4, deadline));
  const size_t n = (size_t{header[0]} << 24) | (size_t{header[1]} << 16) |
                   (size_t{header[2]} << 8) | size_t{header[3]};
  if (n > max) {
    return absl::DataLossError(absl::StrCat("a frame of ", n, " bytes (at most ", max, ")"));
  }
  std::string payload(n, '\0');
  PTXB_RETURN_IF_ERROR(ReadExactly(fd, payload.data(), n, deadline));
  return payload;
}

}  // namespace ptxbench::agent_tool
