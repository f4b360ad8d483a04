// ptxbench-agent-tool: the evaluate tool inside an agent's sandbox.
//   ptxbench-agent-tool mcp                  the MCP stdio server (mcp_server.h)
//   ptxbench-agent-tool relay PORT SOCKET    the loopback relay (relay.h): listens
//                                            on 127.0.0.1:PORT, then goes to the
//                                            background (its pid on stdout)
//   ptxbench-agent-tool eval KERNEL WORKLOAD  the command; installed as
//   ptxbench-eval KERNEL WORKLOAD             (PTXBench's usage) too
// Both reach the gateway over the session's unix socket (eval_wire.h). The
// session's files and socket come from the JSON file that
// $PTXBENCH_AGENT_TOOL_CONFIG names (default /opt/ptxbench/tool.json):
//   {"socket": PATH, "kernel": PATH, "workload": PATH, "eval_wait_s": N}
// Exit codes of eval: 0 the kernel passed, 1 it did not (the feedback is on
// stdout), 2 nothing could be evaluated ("PTXBENCH_INFRA_ERROR: ..." on
// stderr).

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent_tool/eval_wire.h"
#include "agent_tool/mcp_server.h"
#include "agent_tool/relay.h"
#include "common/hash.h"
#include "common/json_reader.h"
#include "common/status_macros.h"

namespace ptxbench::agent_tool {
namespace {

struct Settings {
  std::string socket = "/run/ptxbench/eval.sock";
  ToolConfig files;
  int64_t eval_wait_s = 900;
};

absl::StatusOr<Settings> ReadSettings() {
  const char* env = std::getenv("PTXBENCH_AGENT_TOOL_CONFIG");
  const std::string path = env != nullptr ? env : "/opt/ptxbench/tool.json";
  PTXB_ASSIGN_OR_RETURN(std::string text, ReadAgentFile(path, 1 << 16));
  PTXB_ASSIGN_OR_RETURN(StrictJson j, ParseStrictJson(text, path));
  const JsonReader r(path);
  PTXB_RETURN_IF_ERROR(r.RequireObject(j, ""));
  PTXB_RETURN_IF_ERROR(
      r.CheckKeys(j, "", {"socket", "kernel", "workload", "eval_wait_s", "profile"}, false));
  Settings s;
  PTXB_ASSIGN_OR_RETURN(s.socket, r.String(*JsonReader::Member(j, "socket"), "socket"));
  PTXB_ASSIGN_OR_RETURN(s.files.kernel_path, r.String(*JsonReader::Member(j, "kernel"), "kernel"));
  PTXB_ASSIGN_OR_RETURN(s.files.workload_path,
                        r.String(*JsonReader::Member(j, "workload"), "workload"));
  if (const StrictJson* wait = JsonReader::Member(j, "eval_wait_s")) {
    PTXB_ASSIGN_OR_RETURN(s.eval_wait_s, r.Integer(*wait, "eval_wait_s", 1, 86400));
  }
  if (const StrictJson* profile = JsonReader::Member(j, "profile")) {
    PTXB_ASSIGN_OR_RETURN(s.files.profile, r.Boolean(*profile, "profile"));
  }
  return s;
}

std::string NewActionId() {
  char bytes[16] = {};
  const int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    (void)!read(fd, bytes, sizeof(bytes));
    close(fd);
  }
  return absl::BytesToHexString(absl::string_view(bytes, sizeof(bytes)));
}

absl::StatusOr<EvalReply> ExchangeOnce(const Settings& s, const EvalRequest& request) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError("socket");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (s.socket.size() >= sizeof(addr.sun_path)) {
    close(fd);
    return absl::InvalidArgumentError("the socket path is too long");
  }
  std::memcpy(addr.sun_path, s.socket.data(), s.socket.size());
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return absl::UnavailableError(absl::StrCat("cannot connect to ", s.socket));
  }
  absl::Status sent = WriteFrame(fd, EncodeRequest(request));
  absl::StatusOr<std::string> reply =
      sent.ok() ? ReadFrame(fd, kMaxFrame, absl::Seconds(s.eval_wait_s) + absl::Seconds(30))
                : absl::StatusOr<std::string>(sent);
  close(fd);
  if (!reply.ok()) return reply.status();
  return ParseReply(*reply);
}

// One retry on a broken connection, with the same action id: the gateway
// answers a repeated id with the evaluation it already made.
absl::StatusOr<EvalReply> Exchange(const Settings& s, const EvalRequest& request) {
  absl::StatusOr<EvalReply> reply = ExchangeOnce(s, request);
  if (!reply.ok() && absl::IsUnavailable(reply.status())) {
    sleep(1);
    reply = ExchangeOnce(s, request);
  }
  return reply;
}

int RunEval(const Settings& s, const std::string& kernel, const std::string& workload,
            bool profile) {
  if (profile && !s.files.profile) {
    std::cerr << "ptxbench-eval: --profile: this session's experiment does not ask for "
                 "profiles\n";
    return 2;
  }
  absl::StatusOr<std::string> source = ReadKernelFile(kernel);
  absl::StatusOr<std::string> task = ReadAgentFile(workload, 64 << 20);
  if (!source.ok() || !task.ok()) {
    std::cerr << "ptxbench-eval: " << (source.ok() ? task.status() : source.status()).message()
              << "\n";
    return 2;
  }
  EvalRequest request;
  request.action_id = NewActionId();
  request.source = *std::move(source);
  request.workload_sha256 = Sha256Hex(*task);
  request.profile = profile;
  absl::StatusOr<EvalReply> reply = Exchange(s, request);
  if (!reply.ok()) {
    std::cerr << "PTXBENCH_INFRA_ERROR: " << reply.status().message() << "\n";
    return 2;
  }
  (reply->exit_code >= 2 ? std::cerr : std::cout) << reply->text << "\n";
  return reply->exit_code;
}

// Listens first, then forks: once the command returns, the port accepts.
int StartRelay(const char* port, const char* socket_path) {
  absl::StatusOr<int> listener = ListenLoopback(std::atoi(port));
  if (!listener.ok()) {
    std::cerr << "ptxbench-agent-tool relay: " << listener.status().message() << "\n";
    return 2;
  }
  const pid_t pid = fork();
  if (pid < 0) return 2;
  if (pid == 0) {
    setsid();
    RunRelay(*listener, socket_path);
  }
  std::cout << pid << "\n";
  return 0;
}

int Main(int argc, char** argv) {
  const std::string self = argv[0];
  if (argc == 4 && std::string(argv[1]) == "relay") return StartRelay(argv[2], argv[3]);
  const bool as_eval = absl::EndsWith(self, "ptxbench-eval");
  int first = as_eval ? 1 : 2;
  const std::string mode = as_eval ? "eval" : (argc > 1 ? argv[1] : "");
  // `--profile` first: the evaluation is profiled too (profile_kernel).
  const bool profile = mode == "eval" && argc > first && std::string(argv[first]) == "--profile";
  if (profile) ++first;
  if (mode != "mcp" && !(mode == "eval" && argc == first + 2)) {
    std::cerr << "usage: ptxbench-eval [--profile] KERNEL WORKLOAD\n"
                 "       ptxbench-agent-tool mcp | eval [--profile] KERNEL WORKLOAD | relay PORT "
                 "SOCKET\n";
    return 2;
  }
  absl::StatusOr<Settings> s = ReadSettings();
  if (!s.ok()) {
    std::cerr << "PTXBENCH_INFRA_ERROR: " << s.status().message() << "\n";
    return 2;
  }
  if (mode == "eval") return RunEval(*s, argv[first], argv[first + 1], profile);
  McpServer server(
      s->files, [&](const EvalRequest& r) { return Exchange(*s, r); }, NewActionId);
  server.Serve(std::cin, std::cout);
  return 0;
}

}  // namespace
}  // namespace ptxbench::agent_tool

int main(int argc, char** argv) { return ptxbench::agent_tool::Main(argc, argv); }
