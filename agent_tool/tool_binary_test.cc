// ptxbench-agent-tool as the agent runs it, against a stand-in for the
// gateway's end of the session socket.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <thread>
#include <fstream>
#include <sstream>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "agent_tool/eval_wire.h"
#include "common/hash.h"
#include "testing/eval_socket_stub.h"
#include "testing/unused_port.h"
#include "nlohmann/json.hpp"

namespace ptxbench::agent_tool {
namespace {

using ::testing::HasSubstr;

std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class ToolBinaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           absl::StrCat("tool_", getpid(), "_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "kernel.cu") << "__global__ void k() {}";
    std::ofstream(dir_ / "workload.json") << R"({"definition": "gemm_n7168_k5120"})";
    socket_ = (dir_ / "eval.sock").string();
    std::ofstream(dir_ / "tool.json")
        << nlohmann::json{{"socket", socket_},
                          {"kernel", (dir_ / "kernel.cu").string()},
                          {"workload", (dir_ / "workload.json").string()},
                          {"eval_wait_s", 60}}
               .dump();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs the tool under `name` with `args`, stdin from `input`; its exit
  // code, stdout and stderr.
  struct Run {
    int code;
    std::string out, err;
  };
  Run Tool(const std::string& name, const std::string& args, const std::string& input = "") {
    const std::filesystem::path bin = dir_ / name;
    std::filesystem::create_symlink(PTXB_AGENT_TOOL_BIN, bin);
    std::ofstream(dir_ / "in") << input;
    const std::string cmd = absl::StrCat("PTXBENCH_AGENT_TOOL_CONFIG=", (dir_ / "tool.json").string(),
                                         " ", bin.string(), " ", args, " < ", (dir_ / "in").string(),
                                         " > ", (dir_ / "out").string(), " 2> ",
                                         (dir_ / "err").string());
    const int status = std::system(cmd.c_str());
    std::filesystem::remove(bin);
    return {WEXITSTATUS(status), ReadAll(dir_ / "out"), ReadAll(dir_ / "err")};
  }

  std::filesystem::path dir_;
  std::string socket_;
};

TEST_F(ToolBinaryTest, PtxbenchEvalExitsAsTheEvaluationEnded) {
  testing::EvalSocketStub gateway(socket_, {1, "Evaluation FAILED:\nfeedback"});
  const std::string args =
      absl::StrCat((dir_ / "kernel.cu").string(), " ", (dir_ / "workload.json").string());
  Run failed = Tool("ptxbench-eval", args);
  EXPECT_EQ(failed.code, 1);
  EXPECT_EQ(failed.out, "Evaluation FAILED:\nfeedback\n");
  const std::vector<EvalRequest> requests = gateway.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].source, "__global__ void k() {}");
  EXPECT_EQ(requests[0].workload_sha256, Sha256Hex(R"({"definition": "gemm_n7168_k5120"})"));
  EXPECT_EQ(requests[0].action_id.size(), 32u);
}

TEST_F(ToolBinaryTest, InfrastructureIsExitTwoOnStderr) {
  const std::string args =
      absl::StrCat("eval ", (dir_ / "kernel.cu").string(), " ", (dir_ / "workload.json").string());
  Run nobody = Tool("ptxbench-agent-tool", args);  // no gateway listening
  EXPECT_EQ(nobody.code, 2);
  EXPECT_THAT(nobody.err, HasSubstr("PTXBENCH_INFRA_ERROR: cannot connect to"));
  Run usage = Tool("ptxbench-eval", "only-one-argument");
  EXPECT_EQ(usage.code, 2);
  EXPECT_THAT(usage.err, HasSubstr("usage: ptxbench-eval [--profile] KERNEL WORKLOAD"));
}

// The command refuses a kernel that is not UTF-8 text as infrastructure
// (exit 2, nothing sent), naming the offset of the first bad byte.
TEST_F(ToolBinaryTest, AKernelThatIsNotUtf8IsExitTwoNamingTheOffset) {
  testing::EvalSocketStub gateway(socket_, {0, "Evaluation results:\nPASSED"});
  std::ofstream(dir_ / "kernel.cu", std::ios::binary) << "__global__ void k() {\xff}";
  const std::string args =
      absl::StrCat((dir_ / "kernel.cu").string(), " ", (dir_ / "workload.json").string());
  Run refused = Tool("ptxbench-eval", args);
  EXPECT_EQ(refused.code, 2);
  EXPECT_THAT(refused.err, HasSubstr("is not UTF-8 text: byte 0xff at offset 21"));
  EXPECT_TRUE(gateway.requests().empty());
}

// `--profile` asks for a profile where the session's experiment profiles
// (tool.json says so), and is refused, sending nothing, elsewhere.
TEST_F(ToolBinaryTest, ProfileAsksForAProfileOnlyWhereTheExperimentProfiles) {
  testing::EvalSocketStub gateway(socket_, {0, "Evaluation results:\nProfile (...)"});
  const std::string args = absl::StrCat("--profile ", (dir_ / "kernel.cu").string(), " ",
                                        (dir_ / "workload.json").string());
  Run refused = Tool("ptxbench-eval", args);
  EXPECT_EQ(refused.code, 2);
  EXPECT_THAT(refused.err, HasSubstr("--profile: this session's experiment does not ask for "
                                     "profiles"));
  EXPECT_TRUE(gateway.requests().empty());
  std::ofstream(dir_ / "tool.json")
      << nlohmann::json{{"socket", socket_},
                        {"kernel", (dir_ / "kernel.cu").string()},
                        {"workload", (dir_ / "workload.json").string()},
                        {"profile", true}}
             .dump();
  Run profiled = Tool("ptxbench-eval", args);
  EXPECT_EQ(profiled.code, 0) << profiled.err;
  ASSERT_EQ(gateway.requests().size(), 1u);
  EXPECT_TRUE(gateway.requests()[0].profile);
}

TEST_F(ToolBinaryTest, TheMcpServerEvaluatesThroughTheSocket) {
  testing::EvalSocketStub gateway(socket_, {0, "Evaluation results:\npassed"});
  Run mcp = Tool("ptxbench-agent-tool", "mcp",
                 R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}})"
                 "\n"
                 R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"evaluate_kernel","arguments":{}}})"
                 "\n");
  EXPECT_EQ(mcp.code, 0) << mcp.err;
  std::istringstream lines(mcp.out);
  std::string line;
  std::vector<nlohmann::json> answers;
  while (std::getline(lines, line)) answers.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[1]["result"]["content"][0]["text"], "Evaluation results:\npassed");
  EXPECT_EQ(gateway.requests().size(), 1u);
  EXPECT_EQ(answers[1]["result"]["isError"], false);
}

// The relay joins 127.0.0.1:PORT to a unix socket, bytes both ways, and a
// response still in flight when the client stops writing arrives.
TEST_F(ToolBinaryTest, TheRelayJoinsLoopbackToTheSocket) {
  // An echo server on the unix socket, that answers after the client's EOF.
  const int server = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, socket_.data(), socket_.size());
  ASSERT_EQ(bind(server, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(server, 4), 0);
  std::thread echo([server] {
    const int fd = accept(server, nullptr, nullptr);
    std::string got;
    char buffer[4096];
    ssize_t n;
    while ((n = read(fd, buffer, sizeof(buffer))) > 0) got.append(buffer, static_cast<size_t>(n));
    const std::string answer = "echo:" + got;
    (void)!write(fd, answer.data(), answer.size());
    close(fd);
  });
  const int port = ::ptxbench::testing::UnusedPort();
  Run started = Tool("ptxbench-agent-tool", absl::StrCat("relay ", port, " ", socket_));
  ASSERT_EQ(started.code, 0) << started.err;
  const pid_t relay = std::atoi(started.out.c_str());
  ASSERT_GT(relay, 0);
  absl::Cleanup end_relay = [relay] { kill(relay, SIGKILL); };

  const int client = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&to), sizeof(to)), 0);
  const std::string request(100000, 'r');  // more than one read's worth
  ASSERT_EQ(write(client, request.data(), request.size()), static_cast<ssize_t>(request.size()));
  shutdown(client, SHUT_WR);
  std::string reply;
  char buffer[4096];
  ssize_t n;
  while ((n = read(client, buffer, sizeof(buffer))) > 0) reply.append(buffer, static_cast<size_t>(n));
  close(client);
  echo.join();
  close(server);
  // Compared without printing 100 kB on a failure.
  EXPECT_EQ(reply.size(), request.size() + 5);
  EXPECT_TRUE(reply == "echo:" + request);
}

}  // namespace
}  // namespace ptxbench::agent_tool
