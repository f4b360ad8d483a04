#include "worker/runner/protocol.h"

#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "absl/time/clock.h"

namespace ptxbench::runner::protocol {
namespace {

TEST(ProtocolTest, RequestsRoundTrip) {
  Request r{Op::kWorkload};
  r.axes = {{"M", 70}, {"N", 7168}};
  TensorMeta t;
  t.name = "A";
  t.dtype = 2;
  t.sizes = {70, 5120};
  t.handles[0] = std::string(128, 'a');
  t.handles[1] = std::string(128, 'b');
  r.tensors = {t};
  r.num_inputs = 2;
  absl::StatusOr<Request> back = DecodeRequest(EncodeRequest(r));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->op, Op::kWorkload);
  EXPECT_EQ(back->axes.at("N"), 7168);
  ASSERT_EQ(back->tensors.size(), 1u);
  EXPECT_EQ(back->tensors[0].sizes[1], 5120);
  EXPECT_EQ(back->tensors[0].handles[1], std::string(128, 'b'));
  EXPECT_FALSE(DecodeRequest("{\"op\": \"format-disk\"}").ok());
}

TEST(ProtocolTest, ReferenceHostFieldsRoundTrip) {
  Request load{Op::kLoad};
  load.definition = R"({"name": "rmsnorm"})";
  absl::StatusOr<Request> back = DecodeRequest(EncodeRequest(load));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->definition, load.definition);
  Request workload{Op::kWorkload};
  workload.scalars = {{"eps", "1e-06"}, {"causal", "true"}};
  back = DecodeRequest(EncodeRequest(workload));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->scalars, workload.scalars);
  back = DecodeRequest(EncodeRequest(Request{Op::kCompute}));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->op, Op::kCompute);
}

TEST(ProtocolTest, RepliesAreCheckedAndCleaned) {
  absl::StatusOr<Reply> r = DecodeReply(EncodeReply(false, "bad\x01\xff launch\n"));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->ok);
  EXPECT_EQ(r->text, "bad?? launch\n");
  // Anything but one well-formed record is refused.
  EXPECT_EQ(DecodeReply("{\"trace\": {\"status\": \"PASSED\"}}").status().code(),
            absl::StatusCode::kDataLoss);
  std::string forged = EncodeReply(true, "");
  forged[4] = 7;  // ok must be 0 or 1
  EXPECT_EQ(DecodeReply(forged).status().code(), absl::StatusCode::kDataLoss);
  forged = EncodeReply(true, "");
  forged[8] = '\xff';  // a length past the record
  forged[9] = '\xff';
  EXPECT_EQ(DecodeReply(forged).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeReply(EncodeReply(true, std::string(10000, 'x')))->text.size(), kMaxReplyText);
}

TEST(ProtocolTest, HexIsExact) {
  EXPECT_EQ(*HexDecode(HexEncode("\x01\xab"), 2), "\x01\xab");
  EXPECT_FALSE(HexDecode("0", 1).ok());
  EXPECT_FALSE(HexDecode("zz", 1).ok());
}

TEST(ProtocolTest, MessagesTimeOutAndNoticeAClosedPeer) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, fds), 0);
  EXPECT_EQ(ReceiveMessage(fds[0], absl::Milliseconds(50), 100).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  ASSERT_TRUE(SendMessage(fds[1], std::string(200, 'x')).ok());
  EXPECT_EQ(ReceiveMessage(fds[0], absl::Seconds(1), 100).status().code(),
            absl::StatusCode::kDataLoss);
  ASSERT_TRUE(SendMessage(fds[1], "hello").ok());
  EXPECT_EQ(*ReceiveMessage(fds[0], absl::Seconds(1), 100), "hello");
  close(fds[1]);
  EXPECT_EQ(ReceiveMessage(fds[0], absl::Seconds(1), 100).status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_FALSE(SendMessage(fds[0], "x").ok());
  close(fds[0]);
}

}  // namespace
}  // namespace ptxbench::runner::protocol
