#include "worker/runner/wire/protocol.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <vector>

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
  t.allocated[0] = 2 << 20;
  t.allocated[1] = 4 << 20;
  r.tensors = {t};
  r.num_inputs = 2;
  absl::StatusOr<Request> back = DecodeRequest(EncodeRequest(r));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->op, Op::kWorkload);
  EXPECT_EQ(back->axes.at("N"), 7168);
  ASSERT_EQ(back->tensors.size(), 1u);
  EXPECT_EQ(back->tensors[0].sizes[1], 5120);
  EXPECT_EQ(back->tensors[0].allocated[1], 4 << 20);
  EXPECT_EQ(DescriptorsOf(*back), 2u);  // both sets of the one tensor
  EXPECT_FALSE(DecodeRequest("{\"op\": \"format-disk\"}").ok());
  Request spin{Op::kCalibrate};
  spin.spin_ns = 20000;
  spin.spin_blocks = 132;
  spin.spin_threads = 384;
  spin.spin_smem = 200 << 10;
  spin.spin_cluster = 4;
  back = DecodeRequest(EncodeRequest(spin));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->spin_ns, 20000);
  EXPECT_EQ(back->spin_blocks, 132);
  EXPECT_EQ(back->spin_threads, 384);
  EXPECT_EQ(back->spin_smem, 200 << 10);
  EXPECT_EQ(back->spin_cluster, 4);
  Request call{Op::kCall};
  call.set = 1;
  call.calls = 4;
  back = DecodeRequest(EncodeRequest(call));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->set, 1);
  EXPECT_EQ(back->calls, 4);
}

TEST(ProtocolTest, ComputeRequestsCarryOnlyNewBuffers) {
  Request r{Op::kCompute};
  TensorMeta kept, fresh;
  kept.buffer = 3;
  fresh.buffer = 4;
  fresh.attached = true;
  r.tensors = {kept, fresh};
  absl::StatusOr<Request> back = DecodeRequest(EncodeRequest(r));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->tensors[0].buffer, 3);
  EXPECT_FALSE(back->tensors[0].attached);
  EXPECT_TRUE(back->tensors[1].attached);
  EXPECT_EQ(DescriptorsOf(*back), 1u);
  Request call{Op::kCall};
  call.generation = 4000000000u;
  back = DecodeRequest(EncodeRequest(call));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->generation, 4000000000u);
  EXPECT_EQ(DescriptorsOf(*back), 0u);
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

// The harness's memory travels as descriptors: the host gets exactly those
// sent, in order; a receiver that asks for none gets none (the harness reads
// replies that way, so a host cannot push descriptors into it).
TEST(ProtocolTest, DescriptorsTravelInOrderAndOnlyWhereAskedFor) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, fds), 0);
  int a[2], b[2];
  ASSERT_EQ(pipe(a), 0);
  ASSERT_EQ(pipe(b), 0);
  ASSERT_TRUE(SendMessage(fds[1], "two", {a[1], b[1]}).ok());
  std::vector<int> got;
  ASSERT_EQ(*ReceiveMessage(fds[0], absl::Seconds(1), 100, &got), "two");
  ASSERT_EQ(got.size(), 2u);
  // Each received descriptor is the pipe sent in its place.
  ASSERT_EQ(write(got[0], "A", 1), 1);
  ASSERT_EQ(write(got[1], "B", 1), 1);
  char c = 0;
  ASSERT_EQ(read(a[0], &c, 1), 1);
  EXPECT_EQ(c, 'A');
  ASSERT_EQ(read(b[0], &c, 1), 1);
  EXPECT_EQ(c, 'B');
  for (int fd : got) close(fd);
  // Unasked, they are dropped: the writing end is then closed everywhere but
  // in the sender.
  ASSERT_TRUE(SendMessage(fds[1], "again", {a[1]}).ok());
  close(a[1]);
  EXPECT_EQ(*ReceiveMessage(fds[0], absl::Seconds(1), 100), "again");
  EXPECT_EQ(read(a[0], &c, 1), 0) << "a dropped descriptor stayed open in the receiver";
  EXPECT_EQ(SendMessage(fds[1], "many", std::vector<int>(kMaxDescriptors + 1, b[1])).code(),
            absl::StatusCode::kInvalidArgument);
  for (int fd : {fds[0], fds[1], a[0], b[0], b[1]}) close(fd);
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
