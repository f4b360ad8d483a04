#include "executor/report_repair.h"

#include "gtest/gtest.h"

namespace ptxbench::executor {
namespace {

namespace v1 = ::ptxbench::v1;

TEST(report_repair, EveryStringFieldIsMadeValidAndNamedBytesAreNot) {
  v1::CompleteRequest c;
  c.mutable_lease()->set_task_id("t\xc3\xa9");  // valid: as it is
  v1::TaskFailure* f = c.mutable_failure();
  f->set_failure_class(v1::TERMINAL);
  f->set_message("died\xff");
  v1::AgentRecord* kept = f->mutable_agent_session()->add_records();
  kept->set_name("home/ok.json");
  kept->set_content("\xff\xfe");
  f->mutable_agent_session()->add_records()->set_name("workspace/\xc0\xaf");
  const std::vector<std::string> fixed = MakeStringsValidUtf8(&c);
  EXPECT_EQ(fixed,
            (std::vector<std::string>{"failure.message", "failure.agent_session.records[1].name"}));
  EXPECT_EQ(c.lease().task_id(), "t\xc3\xa9");
  EXPECT_EQ(f->message(), "died\xef\xbf\xbd");
  EXPECT_EQ(f->agent_session().records(1).name(), "workspace/\xef\xbf\xbd");
  EXPECT_EQ(kept->content(), "\xff\xfe") << "bytes are bytes";
  v1::CompleteRequest parsed;
  EXPECT_TRUE(parsed.ParseFromString(c.SerializeAsString()));
  EXPECT_TRUE(MakeStringsValidUtf8(&c).empty()) << "nothing left to repair";
}

TEST(report_repair, AMinimalFailureKeepsItsClassAndTotalsWithoutRecords) {
  v1::CompleteRequest c;
  c.set_executor_id("gw-1");
  c.mutable_lease()->set_lease_id("l1");
  v1::TaskFailure* f = c.mutable_failure();
  f->set_failure_class(v1::TERMINAL);
  f->set_message(std::string(5000, 'x'));
  f->mutable_agent_session()->mutable_total()->set_model_calls(7);
  f->mutable_agent_session()->add_records()->set_name("events.jsonl");
  const v1::CompleteRequest m = MinimalReport(c, "INTERNAL: no");
  EXPECT_EQ(m.executor_id(), "gw-1");
  EXPECT_EQ(m.lease().lease_id(), "l1");
  EXPECT_EQ(m.failure().failure_class(), v1::TERMINAL);
  EXPECT_EQ(m.failure().agent_session().total().model_calls(), 7);
  EXPECT_EQ(m.failure().agent_session().records_size(), 0);
  EXPECT_EQ(m.failure().message(),
            "the report could not be sent: INTERNAL: no; " + std::string(1024, 'x'));
  // An eval result has no such reduction: it runs again (INFRA).
  v1::CompleteRequest eval;
  eval.mutable_eval()->set_status(v1::PASSED);
  EXPECT_EQ(MinimalReport(eval, "why").failure().failure_class(), v1::INFRA);
}

}  // namespace
}  // namespace ptxbench::executor
