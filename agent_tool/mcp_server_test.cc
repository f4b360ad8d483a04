#include "agent_tool/mcp_server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/hash.h"
#include "nlohmann/json.hpp"

namespace ptxbench::agent_tool {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

class McpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::create_directories(dir_);
    config_.kernel_path = dir_ / "kernel.cu";
    config_.workload_path = dir_ / "workload.json";
    Write(config_.workload_path, R"({"definition": "gemm_n7168_k5120"})");
  }
  static void Write(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }
  McpServer Server() {
    return McpServer(
        config_,
        [this](const EvalRequest& r) -> absl::StatusOr<EvalReply> {
          sent_.push_back(r);
          return reply_;
        },
        [this] { return "act" + std::to_string(++ids_); });
  }
  Json Ask(McpServer& server, const Json& message) {
    const std::string line = server.Handle(message.dump());
    EXPECT_FALSE(line.empty());
    EXPECT_EQ(line.back(), '\n');
    return Json::parse(line);
  }
  static Json Call(const std::string& tool, int id = 3) {
    return {{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"},
            {"params", {{"name", tool}, {"arguments", Json::object()}}}};
  }

  std::filesystem::path dir_;
  ToolConfig config_;
  std::vector<EvalRequest> sent_;
  absl::StatusOr<EvalReply> reply_ = EvalReply{0, "Evaluation results:\n[M=70] PASSED"};
  int ids_ = 0;
};

TEST_F(McpServerTest, InitializeAnswersTheClientsVersionWhenItSpeaksIt) {
  McpServer server = Server();
  for (const char* version : {"2024-11-05", "2025-06-18", "2025-11-25"}) {
    Json r = Ask(server, {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"},
                          {"params", {{"protocolVersion", version}}}});
    EXPECT_EQ(r["id"], 1);
    EXPECT_EQ(r["result"]["protocolVersion"], version);
    EXPECT_TRUE(r["result"]["capabilities"].contains("tools"));
  }
  Json future = Ask(server, {{"jsonrpc", "2.0"}, {"id", "x"}, {"method", "initialize"},
                             {"params", {{"protocolVersion", "2031-01-01"}}}});
  EXPECT_EQ(future["id"], "x");
  EXPECT_EQ(future["result"]["protocolVersion"], McpServer::ProtocolVersions().back());
}

TEST_F(McpServerTest, ListsTwoToolsWithoutArguments) {
  McpServer server = Server();
  Json r = Ask(server, {{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/list"}});
  ASSERT_EQ(r["result"]["tools"].size(), 2u);
  EXPECT_EQ(r["result"]["tools"][0]["name"], "evaluate_kernel");
  EXPECT_EQ(r["result"]["tools"][1]["name"], "budget_status");
  EXPECT_TRUE(r["result"]["tools"][0]["inputSchema"]["properties"].empty());
}

// profile_kernel exists only where the experiment asks for profiles; it
// sends the kernel as evaluate_kernel does, asking for a profile too.
TEST_F(McpServerTest, ProfileKernelIsOfferedOnlyWhenTheExperimentProfiles) {
  Write(config_.kernel_path, "__global__ void k() {}");
  McpServer plain = Server();
  Json r = Ask(plain, Call("profile_kernel"));
  EXPECT_EQ(r["error"]["message"], "unknown tool 'profile_kernel'");
  EXPECT_TRUE(sent_.empty());

  config_.profile = true;
  McpServer profiling = Server();
  Json listed = Ask(profiling, {{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/list"}});
  ASSERT_EQ(listed["result"]["tools"].size(), 3u);
  EXPECT_EQ(listed["result"]["tools"][1]["name"], "profile_kernel");
  EXPECT_TRUE(listed["result"]["tools"][1]["inputSchema"]["properties"].empty());
  r = Ask(profiling, Call("profile_kernel"));
  EXPECT_EQ(r["result"]["isError"], false);
  (void)Ask(profiling, Call("evaluate_kernel"));
  ASSERT_EQ(sent_.size(), 2u);
  EXPECT_TRUE(sent_[0].profile);
  EXPECT_EQ(sent_[0].source, "__global__ void k() {}");
  EXPECT_FALSE(sent_[1].profile);
}

TEST_F(McpServerTest, EvaluateSendsTheKernelBoundToTheWorkload) {
  Write(config_.kernel_path, "__global__ void k() {}");
  McpServer server = Server();
  Json r = Ask(server, Call("evaluate_kernel"));
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_EQ(sent_[0].op, EvalRequest::Op::kEvaluate);
  EXPECT_EQ(sent_[0].source, "__global__ void k() {}");
  EXPECT_EQ(sent_[0].action_id, "act1");
  EXPECT_EQ(sent_[0].workload_sha256, Sha256Hex(R"({"definition": "gemm_n7168_k5120"})"));
  EXPECT_EQ(r["result"]["content"][0]["type"], "text");
  EXPECT_EQ(r["result"]["content"][0]["text"], "Evaluation results:\n[M=70] PASSED");
  EXPECT_EQ(r["result"]["isError"], false);
  // Each call is a new evaluation.
  Ask(server, Call("evaluate_kernel"));
  EXPECT_EQ(sent_.at(1).action_id, "act2");
}

TEST_F(McpServerTest, AFailedKernelIsFeedbackAndOnlyInfrastructureIsAnError) {
  Write(config_.kernel_path, "bad");
  McpServer server = Server();
  reply_ = EvalReply{1, "Evaluation FAILED:\ncompile error"};
  EXPECT_EQ(Ask(server, Call("evaluate_kernel"))["result"]["isError"], false);
  reply_ = EvalReply{2, "PTXBENCH_INFRA_ERROR: no worker"};
  EXPECT_EQ(Ask(server, Call("evaluate_kernel"))["result"]["isError"], true);
  reply_ = absl::UnavailableError("cannot connect");
  Json gone = Ask(server, Call("evaluate_kernel"));
  EXPECT_EQ(gone["result"]["isError"], true);
  EXPECT_THAT(gone["result"]["content"][0]["text"].get<std::string>(),
              HasSubstr("PTXBENCH_INFRA_ERROR: the evaluation service did not answer"));
}

TEST_F(McpServerTest, NoKernelOrATooLargeOneIsNotSent) {
  McpServer server = Server();
  Json none = Ask(server, Call("evaluate_kernel"));
  EXPECT_EQ(none["result"]["isError"], true);
  EXPECT_THAT(none["result"]["content"][0]["text"].get<std::string>(),
              HasSubstr("write the kernel there"));
  Write(config_.kernel_path, std::string(kMaxSource + 1, 'x'));
  Json big = Ask(server, Call("evaluate_kernel"));
  EXPECT_EQ(big["result"]["isError"], true);
  EXPECT_THAT(big["result"]["content"][0]["text"].get<std::string>(),
              HasSubstr("larger than 1048576 bytes"));
  EXPECT_TRUE(sent_.empty());
}

// A kernel file that is not UTF-8 text is refused in the tool, naming
// where: sent, it would have been changed on the way (or, before, broke the
// scheduler's parse of the request and blocked the session's slot).
TEST_F(McpServerTest, AKernelThatIsNotUtf8IsRefusedNamingTheOffset) {
  Write(config_.kernel_path, "__global__ void k() {}\n// caf\xe9\n");
  McpServer server = Server();
  Json r = Ask(server, Call("evaluate_kernel"));
  EXPECT_EQ(r["result"]["isError"], true);
  const std::string text = r["result"]["content"][0]["text"];
  EXPECT_THAT(text, HasSubstr("is not UTF-8 text: byte 0xe9 at offset 29 (line 2, column 7)"));
  EXPECT_THAT(text, HasSubstr("fix the file, then call evaluate_kernel again"));
  EXPECT_TRUE(sent_.empty()) << "nothing was sent, nothing counted";
  // The same text in UTF-8 is a kernel like any other.
  Write(config_.kernel_path, "__global__ void k() {}\n// caf\xc3\xa9\n");
  EXPECT_EQ(Ask(server, Call("evaluate_kernel"))["result"]["isError"], false);
  EXPECT_EQ(sent_.size(), 1u);
}

TEST_F(McpServerTest, BudgetStatusAsksTheGateway) {
  McpServer server = Server();
  reply_ = EvalReply{0, "Budget: 4 of 20 evaluations"};
  Json r = Ask(server, Call("budget_status"));
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_EQ(sent_[0].op, EvalRequest::Op::kBudget);
  EXPECT_EQ(r["result"]["content"][0]["text"], "Budget: 4 of 20 evaluations");
}

TEST_F(McpServerTest, ProtocolErrorsAreJsonRpcErrors) {
  McpServer server = Server();
  EXPECT_EQ(Json::parse(server.Handle("{oops"))["error"]["code"], -32700);
  EXPECT_EQ(Ask(server, Json::array())["error"]["code"], -32600);
  EXPECT_EQ(Ask(server, {{"jsonrpc", "2.0"}, {"id", 4}, {"method", "resources/list"}})["error"]
                ["code"],
            -32601);
  Json unknown = Ask(server, Call("shell", 5));
  EXPECT_EQ(unknown["id"], 5);
  EXPECT_EQ(unknown["error"]["code"], -32602);
  EXPECT_EQ(Ask(server, {{"jsonrpc", "2.0"}, {"id", 6}, {"method", "ping"}})["result"],
            Json::object());
  // Notifications and responses get no answer.
  EXPECT_EQ(server.Handle(R"({"jsonrpc": "2.0", "method": "notifications/initialized"})"), "");
  EXPECT_EQ(server.Handle(R"({"jsonrpc": "2.0", "id": 9, "result": {}})"), "");
  EXPECT_TRUE(sent_.empty());
}

TEST_F(McpServerTest, ServeAnswersLineByLine) {
  McpServer server = Server();
  std::istringstream in(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}})"
      "\n"
      R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
      "\n\n"
      R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})"
      "\n");
  std::ostringstream out;
  server.Serve(in, out);
  std::istringstream lines(out.str());
  std::string line;
  std::vector<Json> answers;
  while (std::getline(lines, line)) answers.push_back(Json::parse(line));
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0]["id"], 1);
  EXPECT_EQ(answers[1]["id"], 2);
}

}  // namespace
}  // namespace ptxbench::agent_tool
