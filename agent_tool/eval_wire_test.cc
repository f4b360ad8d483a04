#include "agent_tool/eval_wire.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

namespace ptxbench::agent_tool {
namespace {

using ::testing::HasSubstr;

const std::string kSha(64, 'a');

TEST(EvalWire, RequestsAndRepliesRoundTrip) {
  EvalRequest r;
  r.action_id = "a1-B_2";
  r.source = std::string("__global__ void k() {}\n\"quoted\"\t\x01", 36);
  r.workload_sha256 = kSha;
  absl::StatusOr<EvalRequest> back = ParseRequest(EncodeRequest(r));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->op, EvalRequest::Op::kEvaluate);
  EXPECT_EQ(back->action_id, r.action_id);
  EXPECT_EQ(back->source, r.source);
  EXPECT_EQ(back->workload_sha256, kSha);
  EXPECT_FALSE(back->profile);
  EXPECT_EQ(EncodeRequest(r).find("profile"), std::string::npos);  // as before the field
  r.profile = true;
  EXPECT_TRUE(ParseRequest(EncodeRequest(r))->profile);

  EvalRequest budget;
  budget.op = EvalRequest::Op::kBudget;
  EXPECT_EQ(ParseRequest(EncodeRequest(budget))->op, EvalRequest::Op::kBudget);

  absl::StatusOr<EvalReply> reply = ParseReply(EncodeReply({1, "Evaluation FAILED:\n..."}));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->exit_code, 1);
  EXPECT_EQ(reply->text, "Evaluation FAILED:\n...");
}

TEST(EvalWire, AHostileRequestIsRefusedNamingWhy) {
  auto refused = [](const std::string& json) {
    absl::StatusOr<EvalRequest> r = ParseRequest(json);
    EXPECT_FALSE(r.ok()) << json;
    return std::string(r.status().message());
  };
  EXPECT_THAT(refused("not json"), HasSubstr("malformed JSON"));
  EXPECT_THAT(refused("[]"), HasSubstr("expected an object"));
  EXPECT_THAT(refused(R"({"op": "shell"})"), HasSubstr("$.op: expected one of"));
  EXPECT_THAT(refused(R"({"op": "budget", "x": 1})"), HasSubstr("x"));
  const std::string ok_tail = R"(, "source": "s", "workload_sha256": ")" + kSha + "\"}";
  EXPECT_THAT(refused(R"({"op": "evaluate", "action_id": "../../etc")" + ok_tail),
              HasSubstr("$.action_id: expected [A-Za-z0-9_-]{1,64}"));
  EXPECT_THAT(refused(R"({"op": "evaluate", "action_id": ")" + std::string(65, 'a') + "\"" +
                      ok_tail),
              HasSubstr("$.action_id"));
  EXPECT_THAT(refused(R"({"op": "evaluate", "action_id": "a", "source": "s", )"
                      R"("workload_sha256": "ABC"})"),
              HasSubstr("$.workload_sha256: expected 64 lowercase hex digits"));
  EXPECT_THAT(refused(R"({"op": "evaluate", "action_id": "a", "source": 5, )"
                      R"("workload_sha256": ")" + kSha + "\"}"),
              HasSubstr("$.source"));
  EXPECT_THAT(refused(R"({"op": "evaluate", "action_id": "a", "action_id": "b", )"
                      R"("source": "s", "workload_sha256": ")" + kSha + "\"}"),
              HasSubstr("each key once per object"));
  EXPECT_THAT(refused(R"({"op": "evaluate", "action_id": "a", "source": "s", "profile": 1, )"
                      R"("workload_sha256": ")" + kSha + "\"}"),
              HasSubstr("$.profile: expected true or false"));
  EvalRequest big;
  big.action_id = "a";
  big.source = std::string(kMaxSource + 1, 'x');
  big.workload_sha256 = kSha;
  EXPECT_THAT(refused(EncodeRequest(big)),
              HasSubstr("$.source: expected a kernel of at most 1048576 bytes"));
  EXPECT_THAT(std::string(ParseReply(R"({"exit_code": 7, "text": ""})").status().message()),
              HasSubstr("$.exit_code"));
}

class FrameTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0); }
  void TearDown() override {
    for (int fd : fds_) {
      if (fd >= 0) close(fd);
    }
  }
  int fds_[2] = {-1, -1};
};

TEST_F(FrameTest, AFrameArrivesWhole) {
  const std::string payload(100000, 'p');
  std::string got;
  // Larger than a socket buffer: written while the other end reads.
  std::thread writer([&] { ASSERT_TRUE(WriteFrame(fds_[0], payload).ok()); });
  absl::StatusOr<std::string> read = ReadFrame(fds_[1], kMaxFrame, absl::Seconds(5));
  writer.join();
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, payload);
}

TEST_F(FrameTest, AnOversizeLengthIsRefusedBeforeAnythingIsRead) {
  const char header[4] = {'\x7f', '\xff', '\xff', '\xff'};
  ASSERT_EQ(write(fds_[0], header, 4), 4);
  absl::StatusOr<std::string> read = ReadFrame(fds_[1], 1024, absl::Seconds(5));
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(read.status().message()), HasSubstr("at most 1024"));
}

TEST_F(FrameTest, ASilentOrClosedPeerEndsTheRead) {
  const char half[3] = {0, 0, 0};
  ASSERT_EQ(write(fds_[0], half, 3), 3);
  EXPECT_EQ(ReadFrame(fds_[1], 1024, absl::Milliseconds(100)).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  close(fds_[0]);
  fds_[0] = -1;
  EXPECT_EQ(ReadFrame(fds_[1], 1024, absl::Seconds(5)).status().code(),
            absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace ptxbench::agent_tool
