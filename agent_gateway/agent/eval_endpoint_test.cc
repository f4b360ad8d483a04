#include "agent_gateway/agent/eval_endpoint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <future>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"

namespace ptxbench::agent_gateway {
namespace {

using agent_tool::EvalReply;
using agent_tool::EvalRequest;
using ::testing::HasSubstr;

const std::string kSha(64, 'b');

EvalRequest Evaluate(const std::string& id, const std::string& source = "k",
                     const std::string& sha = kSha) {
  EvalRequest r;
  r.action_id = id;
  r.source = source;
  r.workload_sha256 = sha;
  return r;
}

class EvalEndpointTest : public ::testing::Test {
 protected:
  EvalEndpoint::Settings Settings(int64_t max = 0, bool show_budget = false) {
    return {kSha, "gemm_n7168_k5120/242ddd1a", max, show_budget};
  }
  // Records each turn and answers it; blocks while `hold_` is set until
  // `release_` is notified.
  EvalEndpoint::Evaluate Recorder() {
    return [this](int turn, const std::string& source, bool profile) {
      turns_.push_back(absl::StrCat(turn, ":", source, profile ? " (profile)" : ""));
      if (hold_) {
        started_.Notify();
        release_.WaitForNotification();
      }
      return EvalReply{1, absl::StrCat("feedback for turn ", turn)};
    };
  }
  static std::string Budget() { return "Budget: 1 of 20 evaluations"; }

  std::vector<std::string> turns_;
  bool hold_ = false;
  absl::Notification started_, release_;
};

TEST_F(EvalEndpointTest, EachEvaluationIsATurn) {
  EvalEndpoint endpoint(Settings(), Recorder(), Budget);
  EXPECT_EQ(endpoint.Handle(Evaluate("a", "first")).text, "feedback for turn 1");
  EvalReply second = endpoint.Handle(Evaluate("b", "second"));
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_EQ(second.text, "feedback for turn 2");
  EXPECT_THAT(turns_, ::testing::ElementsAre("1:first", "2:second"));
  EXPECT_EQ(endpoint.evaluations(), 2);
  EXPECT_FALSE(endpoint.limit_reached());
}

TEST_F(EvalEndpointTest, AProfileKernelCallIsATurnThatAsksForAProfile) {
  EvalEndpoint endpoint(Settings(), Recorder(), Budget);
  EvalRequest profiled = Evaluate("a", "first");
  profiled.profile = true;
  EXPECT_EQ(endpoint.Handle(profiled).text, "feedback for turn 1");
  (void)endpoint.Handle(Evaluate("b", "second"));
  EXPECT_THAT(turns_, ::testing::ElementsAre("1:first (profile)", "2:second"));
}

TEST_F(EvalEndpointTest, AnotherWorkloadIsRefusedAndNotCounted) {
  EvalEndpoint endpoint(Settings(), Recorder(), Budget);
  EvalReply r = endpoint.Handle(Evaluate("a", "k", std::string(64, 'c')));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.text,
            "refused: workload mismatch: this session is bound to gemm_n7168_k5120/242ddd1a (the "
            "task file it was given); nothing was evaluated");
  EXPECT_TRUE(turns_.empty());
  EXPECT_EQ(endpoint.evaluations(), 0);
}

// An agent writing to its socket directly can send any source: one that is
// not UTF-8 text is refused naming where, and is no turn (sent on, the
// scheduler could not parse it and the session waited out its
// eval_wait_timeout).
TEST_F(EvalEndpointTest, ASourceThatIsNotUtf8IsRefusedAndNotCounted) {
  EvalEndpoint endpoint(Settings(), Recorder(), Budget);
  const EvalReply refused = endpoint.Handle(Evaluate("a1", "__global__ void k() {}\xc0\xaf"));
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.text, HasSubstr("not UTF-8 text: byte 0xc0 at offset 22"));
  EXPECT_EQ(endpoint.evaluations(), 0);
  EXPECT_TRUE(turns_.empty());
  EXPECT_EQ(endpoint.Handle(Evaluate("a2", "// caf\xc3\xa9")).exit_code, 1);
  EXPECT_EQ(endpoint.evaluations(), 1);
}

TEST_F(EvalEndpointTest, OneEvaluationInFlightAndARetryJoinsIt) {
  hold_ = true;
  EvalEndpoint endpoint(Settings(), Recorder(), Budget);
  auto first = std::async(std::launch::async, [&] { return endpoint.Handle(Evaluate("a")); });
  started_.WaitForNotification();
  EvalReply busy = endpoint.Handle(Evaluate("b"));
  EXPECT_EQ(busy.exit_code, 2);
  EXPECT_THAT(busy.text, HasSubstr("another evaluation is in progress; wait for its feedback"));
  // The same action id again (a retried command) waits for that evaluation.
  auto retry = std::async(std::launch::async, [&] { return endpoint.Handle(Evaluate("a")); });
  absl::SleepFor(absl::Milliseconds(50));
  release_.Notify();
  EXPECT_EQ(first.get().text, "feedback for turn 1");
  EXPECT_EQ(retry.get().text, "feedback for turn 1");
  // And once more after it ended: still that turn, not a new one.
  EXPECT_EQ(endpoint.Handle(Evaluate("a")).text, "feedback for turn 1");
  EXPECT_EQ(turns_.size(), 1u);
  EXPECT_EQ(endpoint.evaluations(), 1);
  EXPECT_GE(endpoint.blocked(), absl::Milliseconds(50));
}

TEST_F(EvalEndpointTest, TheCallAfterTheLastEvaluationEndsTheSession) {
  EvalEndpoint endpoint(Settings(/*max=*/2), Recorder(), Budget);
  endpoint.Handle(Evaluate("a"));
  endpoint.Handle(Evaluate("b"));
  EvalReply over = endpoint.Handle(Evaluate("c"));
  EXPECT_EQ(over.exit_code, 2);
  EXPECT_EQ(over.text, "refused: evaluation limit reached (2 of 2); the session ends");
  EXPECT_TRUE(endpoint.limit_reached());
  EXPECT_EQ(turns_.size(), 2u);
}

TEST_F(EvalEndpointTest, TheBudgetLineOnRequestAndAfterFeedback) {
  EvalEndpoint endpoint(Settings(0, /*show_budget=*/true), Recorder(), Budget);
  EvalRequest budget;
  budget.op = EvalRequest::Op::kBudget;
  EXPECT_EQ(endpoint.Handle(budget).text, "Budget: 1 of 20 evaluations");
  EXPECT_EQ(endpoint.Handle(Evaluate("a")).text,
            "feedback for turn 1\nBudget: 1 of 20 evaluations");
  EXPECT_EQ(endpoint.evaluations(), 1);
}

// Over the socket, as the tool reaches it.
class EvalSocketTest : public EvalEndpointTest {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() / absl::StrCat("ptxb-ep-", getpid());
  }
  int Connect() {
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path_.data(), path_.size());
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    return fd;
  }
  absl::StatusOr<std::string> Exchange(const std::string& payload) {
    const int fd = Connect();
    EXPECT_TRUE(agent_tool::WriteFrame(fd, payload).ok());
    absl::StatusOr<std::string> reply = agent_tool::ReadFrame(fd, 1 << 20, absl::Seconds(5));
    close(fd);
    return reply;
  }
  std::string path_;
};

TEST_F(EvalSocketTest, AnswersRequestsAndRefusesMalformedOnes) {
  EvalEndpoint endpoint(Settings(), Recorder(), Budget);
  ASSERT_TRUE(endpoint.Listen(path_));
  struct stat st {};
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  absl::StatusOr<std::string> ok = Exchange(agent_tool::EncodeRequest(Evaluate("a", "src")));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(agent_tool::ParseReply(*ok)->text, "feedback for turn 1");

  absl::StatusOr<std::string> bad = Exchange(R"({"op": "evaluate", "action_id": "../x"})");
  ASSERT_TRUE(bad.ok()) << bad.status();
  absl::StatusOr<EvalReply> refused = agent_tool::ParseReply(*bad);
  EXPECT_EQ(refused->exit_code, 2);
  EXPECT_THAT(refused->text, HasSubstr("refused: malformed request"));
  EXPECT_EQ(endpoint.evaluations(), 1);
}

// The socket's mode is not set through the umask, which is the whole
// process's: a gateway makes other sessions' directories on other threads
// while one session listens, and one made in such a window came out 0600
// (its CLI could not reach its own HOME).
TEST_F(EvalSocketTest, ListeningLeavesOtherThreadsFilesTheirModes) {
  const std::string dirs = path_ + "-dirs";
  std::filesystem::create_directories(dirs);
  const mode_t mask = umask(0);  // read, then put back
  umask(mask);
  const mode_t expected = 0777 & ~mask;
  std::atomic<bool> done{false};
  std::thread listener([&] {
    for (int i = 0; i < 300; ++i) {
      EvalEndpoint endpoint(Settings(), Recorder(), Budget);
      EXPECT_TRUE(endpoint.Listen(absl::StrCat(path_, "-", i)));
    }
    done = true;
  });
  int made = 0, wrong = 0;
  while (!done) {
    const std::string dir = absl::StrCat(dirs, "/", made++);
    ASSERT_EQ(mkdir(dir.c_str(), 0777), 0);
    struct stat st {};
    ASSERT_EQ(stat(dir.c_str(), &st), 0);
    wrong += (st.st_mode & 0777) != expected;
    rmdir(dir.c_str());
  }
  listener.join();
  std::filesystem::remove_all(dirs);
  EXPECT_EQ(wrong, 0) << "of " << made << " directories made while sockets were being bound";
}

TEST_F(EvalSocketTest, AnOversizeFrameGetsAClosedConnection) {
  EvalEndpoint endpoint(Settings(), Recorder(), Budget);
  ASSERT_TRUE(endpoint.Listen(path_));
  const int fd = Connect();
  const char header[4] = {'\x7f', '\x00', '\x00', '\x00'};
  ASSERT_EQ(write(fd, header, 4), 4);
  EXPECT_EQ(agent_tool::ReadFrame(fd, 1 << 20, absl::Seconds(5)).status().code(),
            absl::StatusCode::kUnavailable);
  close(fd);
  EXPECT_TRUE(turns_.empty());
}

}  // namespace
}  // namespace ptxbench::agent_gateway
