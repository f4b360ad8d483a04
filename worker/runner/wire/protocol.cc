#include "worker/runner/wire/protocol.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/printable_text.h"
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

void CloseAll(std::vector<int>& fds, size_t from) {
  for (size_t i = from; i < fds.size(); ++i) close(fds[i]);
  fds.resize(from);
}

}  // namespace

size_t DescriptorsOf(const Request& r) {
  switch (r.op) {
    case Op::kSetup:
      return 1;
    case Op::kWorkload:
      return 2 * r.tensors.size();
    case Op::kCompute: {
      size_t n = 0;
      for (const TensorMeta& t : r.tensors) n += t.attached ? 1 : 0;
      return n;
    }
    default:
      return 0;
  }
}

std::string EncodeRequest(const Request& r) {
  json tensors = json::array();
  for (const TensorMeta& t : r.tensors) {
    tensors.push_back({{"name", t.name},
                       {"dtype", t.dtype},
                       {"sizes", t.sizes},
                       {"allocated", {t.allocated[0], t.allocated[1]}},
                       {"buffer", t.buffer},
                       {"attached", t.attached}});
  }
  return json{{"op", kOps[static_cast<int>(r.op)]},
              {"sync_bytes", r.sync_bytes},
              {"generation", r.generation},
              {"spin_ns", r.spin_ns},
              {"spin_blocks", r.spin_blocks},
              {"spin_threads", r.spin_threads},
              {"spin_smem", r.spin_smem},
              {"spin_cluster", r.spin_cluster},
              {"language", r.language},
              {"artifact", r.artifact},
              {"launch_spec", r.launch_spec},
              {"axis_order", r.axis_order},
              {"definition", r.definition},
              {"axes", r.axes},
              {"scalars", r.scalars},
              {"tensors", tensors},
              {"num_inputs", r.num_inputs},
              {"set", r.set},
              {"calls", r.calls}}
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
    r.sync_bytes = j.at("sync_bytes").get<int64_t>();
    r.generation = j.at("generation").get<uint32_t>();
    r.spin_ns = j.at("spin_ns").get<int64_t>();
    r.spin_blocks = j.at("spin_blocks").get<int>();
    r.spin_threads = j.at("spin_threads").get<int>();
    r.spin_smem = j.at("spin_smem").get<int>();
    r.spin_cluster = j.at("spin_cluster").get<int>();
    r.calls = j.at("calls").get<int>();
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
      m.allocated[0] = t.at("allocated").at(0).get<int64_t>();
      m.allocated[1] = t.at("allocated").at(1).get<int64_t>();
      m.buffer = t.at("buffer").get<int64_t>();
      m.attached = t.at("attached").get<bool>();
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
  r.text = PrintableLines(absl::string_view(w.text, w.length), kMaxReplyText);
  return r;
}

absl::Status SendMessage(int fd, absl::string_view message, const std::vector<int>& descriptors) {
  if (descriptors.size() > kMaxDescriptors) {
    return absl::InvalidArgumentError(absl::StrCat(
        descriptors.size(), " descriptors in one message (at most ", kMaxDescriptors, ")"));
  }
  iovec iov{const_cast<char*>(message.data()), message.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  std::vector<char> control;
  if (!descriptors.empty()) {
    control.resize(CMSG_SPACE(sizeof(int) * descriptors.size()));
    msg.msg_control = control.data();
    msg.msg_controllen = control.size();
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * descriptors.size());
    std::memcpy(CMSG_DATA(c), descriptors.data(), sizeof(int) * descriptors.size());
  }
  while (true) {
    const ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (n == static_cast<ssize_t>(message.size())) return absl::OkStatus();
    if (n < 0 && errno == EINTR) continue;
    return absl::UnavailableError(
        absl::StrCat("the channel is closed: ", n < 0 ? strerror(errno) : "short send"));
  }
}

absl::StatusOr<std::string> ReceiveMessage(int fd, absl::Duration timeout, size_t max_bytes,
                                           std::vector<int>* descriptors) {
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
    iovec iov{buf.data(), buf.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    std::vector<char> control;
    if (descriptors != nullptr) {
      control.resize(CMSG_SPACE(sizeof(int) * kMaxDescriptors));
      msg.msg_control = control.data();
      msg.msg_controllen = control.size();
    }
    const ssize_t n = recvmsg(fd, &msg, MSG_TRUNC | MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    const size_t first = descriptors != nullptr ? descriptors->size() : 0;
    if (n >= 0 && descriptors != nullptr) {
      for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; ++i) {
          int received = -1;
          std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
          descriptors->push_back(received);
        }
      }
      if (msg.msg_flags & MSG_CTRUNC) {
        CloseAll(*descriptors, first);
        return absl::DataLossError("a message with more descriptors than a request carries");
      }
    }
    if (n == 0 || (n < 0 && (p.revents & (POLLHUP | POLLERR)))) {
      return absl::UnavailableError("the peer closed the channel");
    }
    if (n < 0) return absl::UnavailableError(absl::StrCat("recv: ", strerror(errno)));
    if (static_cast<size_t>(n) > max_bytes) {
      if (descriptors != nullptr) CloseAll(*descriptors, first);
      return absl::DataLossError(absl::StrCat("a message of ", n, " bytes (at most ", max_bytes, ")"));
    }
    buf.resize(static_cast<size_t>(n));
    return buf;
  }
}

}  // namespace ptxbench::runner::protocol
