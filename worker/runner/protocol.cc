#include "worker/runner/protocol.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"

namespace ptxbench::runner::protocol {
namespace {

using nlohmann::json;

constexpr const char* kOps[] = {"setup", "calibrate", "empty", "load",
                                "workload", "call", "quit", "compute"};

// The reply record: a magic number, so that random bytes are refused.
constexpr uint32_t kReplyMagic = 0x50545852;  // "PTXR"
struct WireReply {
  uint32_t magic;
  uint32_t ok;
  uint32_t length;
  char text[kMaxReplyText];
};

}  // namespace

std::string HexEncode(absl::string_view bytes) { return absl::BytesToHexString(bytes); }

absl::StatusOr<std::string> HexDecode(absl::string_view hex, size_t size) {
  if (hex.size() != 2 * size) {
    return absl::InvalidArgumentError(absl::StrCat("expected ", 2 * size, " hex digits"));
  }
  for (char c : hex) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) {
      return absl::InvalidArgumentError("not hex");
    }
  }
  return absl::HexStringToBytes(hex);
}

std::string EncodeRequest(const Request& r) {
  json tensors = json::array();
  for (const TensorMeta& t : r.tensors) {
    tensors.push_back({{"name", t.name},
                       {"dtype", t.dtype},
                       {"sizes", t.sizes},
                       {"handles", {t.handles[0], t.handles[1]}}});
  }
  return json{{"op", kOps[static_cast<int>(r.op)]},
              {"go_event", r.go_event},
              {"done_event", r.done_event},
              {"stamps", r.stamps},
              {"spin_ns", r.spin_ns},
              {"language", r.language},
              {"artifact", r.artifact},
              {"launch_spec", r.launch_spec},
              {"axis_order", r.axis_order},
              {"definition", r.definition},
              {"axes", r.axes},
              {"scalars", r.scalars},
              {"tensors", tensors},
              {"num_inputs", r.num_inputs},
              {"set", r.set}}
      .dump();
}

absl::StatusOr<Request> DecodeRequest(absl::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return absl::InvalidArgumentError("request: not JSON");
  Request r;
  try {
    const std::string op = j.at("op").get<std::string>();
    bool known = false;
    for (int i = 0; i < static_cast<int>(std::size(kOps)); ++i) {
      if (op == kOps[i]) {
        r.op = static_cast<Op>(i);
        known = true;
      }
    }
    if (!known) return absl::InvalidArgumentError(absl::StrCat("request: unknown op ", op));
    r.go_event = j.at("go_event").get<std::string>();
    r.done_event = j.at("done_event").get<std::string>();
    r.stamps = j.at("stamps").get<std::string>();
    r.spin_ns = j.at("spin_ns").get<int64_t>();
    r.language = j.at("language").get<std::string>();
    r.artifact = j.at("artifact").get<std::string>();
    r.launch_spec = j.at("launch_spec").get<std::string>();
    r.axis_order = j.at("axis_order").get<std::vector<std::string>>();
    r.definition = j.at("definition").get<std::string>();
    r.axes = j.at("axes").get<std::map<std::string, int64_t>>();
    r.scalars = j.at("scalars").get<std::map<std::string, std::string>>();
    for (const json& t : j.at("tensors")) {
      TensorMeta m;
      m.name = t.at("name").get<std::string>();
      m.dtype = t.at("dtype").get<int>();
      m.sizes = t.at("sizes").get<std::vector<int64_t>>();
      m.handles[0] = t.at("handles").at(0).get<std::string>();
      m.handles[1] = t.at("handles").at(1).get<std::string>();
      r.tensors.push_back(std::move(m));
    }
    r.num_inputs = j.at("num_inputs").get<int>();
    r.set = j.at("set").get<int>();
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("request: ", e.what()));
  }
  return r;
}

std::string EncodeReply(bool ok, absl::string_view text) {
  WireReply w{};
  w.magic = kReplyMagic;
  w.ok = ok ? 1 : 0;
  w.length = static_cast<uint32_t>(std::min(text.size(), kMaxReplyText));
  std::memcpy(w.text, text.data(), w.length);
  return std::string(reinterpret_cast<const char*>(&w), sizeof(w));
}

std::string PrintableText(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    out.push_back((u >= 0x20 && u < 0x7f) || c == '\n' || c == '\t' ? c : '?');
  }
  return out;
}

absl::StatusOr<Reply> DecodeReply(absl::string_view bytes) {
  WireReply w;
  if (bytes.size() != sizeof(w)) {
    return absl::DataLossError(absl::StrCat("a reply of ", bytes.size(), " bytes (expected ",
                                            sizeof(w), ")"));
  }
  std::memcpy(&w, bytes.data(), sizeof(w));
  if (w.magic != kReplyMagic || w.ok > 1 || w.length > kMaxReplyText) {
    return absl::DataLossError("a malformed reply record");
  }
  Reply r;
  r.ok = w.ok == 1;
  r.text = PrintableText(absl::string_view(w.text, w.length));
  return r;
}

absl::Status SendMessage(int fd, absl::string_view message) {
  while (true) {
    const ssize_t n = send(fd, message.data(), message.size(), MSG_NOSIGNAL);
    if (n == static_cast<ssize_t>(message.size())) return absl::OkStatus();
    if (n < 0 && errno == EINTR) continue;
    return absl::UnavailableError(
        absl::StrCat("the channel is closed: ", n < 0 ? strerror(errno) : "short send"));
  }
}

absl::StatusOr<std::string> ReceiveMessage(int fd, absl::Duration timeout, size_t max_bytes) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    const int64_t left_ms =
        std::max<int64_t>(0, absl::ToInt64Milliseconds(deadline - absl::Now()));
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<int64_t>(left_ms, 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      if (absl::Now() >= deadline) return absl::DeadlineExceededError("no message in time");
      continue;
    }
    std::string buf(max_bytes + 1, '\0');
    const ssize_t n = recv(fd, buf.data(), buf.size(), MSG_TRUNC);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || (n < 0 && (p.revents & (POLLHUP | POLLERR)))) {
      return absl::UnavailableError("the peer closed the channel");
    }
    if (n < 0) return absl::UnavailableError(absl::StrCat("recv: ", strerror(errno)));
    if (static_cast<size_t>(n) > max_bytes) {
      return absl::DataLossError(absl::StrCat("a message of ", n, " bytes (at most ", max_bytes, ")"));
    }
    buf.resize(static_cast<size_t>(n));
    return buf;
  }
}

}  // namespace ptxbench::runner::protocol
