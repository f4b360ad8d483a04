// The /metrics pages of a scheduler, a simulated worker and a real gateway
// (against a fake model server) after a small experiment: a few values are
// what happened, each page passes `promtool check metrics` (its lint
// included), the Grafana dashboard asks only for metrics the pages expose,
// and docs/OBSERVABILITY.md lists exactly the metrics they expose.
#include <httplib.h>
#include <stdio.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "agent_gateway/testing/fake_model_server.h"
#include "common/data_dir.h"
#include "common/file.h"
#include "gtest/gtest.h"
#include "testing/unused_port.h"
#include "tests/cluster.h"
#include "tests/gateway_test_util.h"

namespace ptxbench::testing {
namespace {

using agent_gateway::testing_support::Completion;
using agent_gateway::testing_support::FakeModelServer;

constexpr int kSamples = 3;
constexpr int kTurns = 2;

// GET `path` from HOST:PORT; "" when it does not answer 200.
std::string Get(const std::string& address, const std::string& path) {
  const size_t colon = address.rfind(':');
  httplib::Client client(address.substr(0, colon), std::stoi(address.substr(colon + 1)));
  auto res = client.Get(path.c_str());
  return res && res->status == 200 ? res->body : "";
}

// The value of the sample `series` (name and labels exactly as written), or
// -1 when the page has none.
double Value(const std::string& page, const std::string& series) {
  const std::string line_start = series + " ";
  size_t at = page.rfind("\n" + line_start);
  if (at == std::string::npos) return -1;
  at += 1 + line_start.size();
  return std::stod(page.substr(at, page.find('\n', at) - at));
}

// The sum of every sample of family `name` (labels any).
double Sum(const std::string& page, const std::string& name) {
  double sum = 0;
  std::istringstream lines(page);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(name + "{", 0) == 0 || line.rfind(name + " ", 0) == 0) {
      sum += std::stod(line.substr(line.rfind(' ') + 1));
    }
  }
  return sum;
}

// The families a page declares (its TYPE lines).
std::set<std::string> Families(const std::string& page) {
  std::set<std::string> out;
  std::istringstream lines(page);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# TYPE ", 0) == 0) out.insert(line.substr(7, line.find(' ', 7) - 7));
  }
  return out;
}

// promtool's verdict on `page`: exit status and what it printed.
std::pair<int, std::string> Promtool(const std::string& dir, const std::string& name,
                                     const std::string& page) {
  const std::string file = dir + "/" + name + ".prom";
  std::ofstream(file) << page;
  FILE* pipe = popen(("promtool check metrics < " + file + " 2>&1").c_str(), "r");
  std::string out;
  char buf[512];
  while (pipe != nullptr && fgets(buf, sizeof(buf), pipe) != nullptr) out += buf;
  const int status = pipe == nullptr ? -1 : pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string ReadAddress(const std::string& file) {
  for (int i = 0; i < 100; ++i) {
    std::string text = ReadFile(file).value_or("");
    if (!text.empty() && text.back() == '\n') return text.substr(0, text.size() - 1);
    usleep(50'000);
  }
  return "";
}

class MetricsEndToEndTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("PTXB_FAKE_OPENAI_KEY", "sk-metrics-e2e", 1);
    const std::string kernel = "```cuda\n__global__ void k() {}\n```\n";
    server_ = new FakeModelServer();
    server_->Answer([kernel](const httplib::Request&, httplib::Response& res) {
      res.set_content(Completion("Here.\n" + kernel, "stop"), "application/json");
    });
    cluster_ = new Cluster("e2e_metrics");
    ASSERT_TRUE(cluster_->StartScheduler({"--metrics-listen", "0"})) << cluster_->SchedulerLogTail();
    const int worker_port = UnusedPort(), gateway_port = UnusedPort();
    cluster_->AddWorker({"--gpus", "2", "--slots", "2", "--status-listen",
                         std::to_string(worker_port), "--stats-interval-s", "1"});
    const std::string registry = WriteRegistry(*cluster_, "fake-model", "openai",
                                               server_->base_url(), "PTXB_FAKE_OPENAI_KEY");
    cluster_->AddRealGateway({"--models", registry, "--serve", "fake-model", "--slots", "4",
                              "--status-listen", std::to_string(gateway_port)});
    const nlohmann::json spec = {{"name", "metrics"},
                                 {"models", {"fake-model"}},
                                 {"definitions", {"gemm_n7168_k5120"}},
                                 {"prompt_tags", {"ptxb-no-hint"}},
                                 {"samples", kSamples},
                                 {"num_turns", kTurns},
                                 {"target_speedup", 1000.0}};
    const std::string exp = cluster_->Submit(cluster_->WriteFile("spec.json", spec.dump(2)));
    ASSERT_FALSE(exp.empty()) << cluster_->SchedulerLogTail();
    status_ = new nlohmann::json(cluster_->WaitFinished(exp, 120));
    pages_ = new std::map<std::string, std::string>{
        {"scheduler", Get(ReadAddress(cluster_->dir() + "/metrics.addr"), "/metrics")},
        {"worker", Get("127.0.0.1:" + std::to_string(worker_port), "/metrics")},
        {"gateway", Get("127.0.0.1:" + std::to_string(gateway_port), "/metrics")}};
    worker_health_ = new std::string(Get("127.0.0.1:" + std::to_string(worker_port), "/healthz"));
  }
  static void TearDownTestSuite() {
    delete pages_;
    delete status_;
    delete worker_health_;
    delete cluster_;
    delete server_;
  }
  void SetUp() override {
    ASSERT_TRUE(status_ != nullptr && pages_ != nullptr) << "the experiment did not run";
    ASSERT_EQ((*status_)["trajectories"]["terminal"], kSamples) << status_->dump();
  }
  static const std::string& Page(const std::string& daemon) { return pages_->at(daemon); }

  static FakeModelServer* server_;
  static Cluster* cluster_;
  static nlohmann::json* status_;
  static std::map<std::string, std::string>* pages_;
  static std::string* worker_health_;
};

FakeModelServer* MetricsEndToEndTest::server_ = nullptr;
Cluster* MetricsEndToEndTest::cluster_ = nullptr;
nlohmann::json* MetricsEndToEndTest::status_ = nullptr;
std::map<std::string, std::string>* MetricsEndToEndTest::pages_ = nullptr;
std::string* MetricsEndToEndTest::worker_health_ = nullptr;

TEST_F(MetricsEndToEndTest, SchedulerCountsWhatHappened) {
  const std::string& page = Page("scheduler");
  ASSERT_FALSE(page.empty()) << cluster_->SchedulerLogTail();
  // Every turn is an LLM step then an eval step; each was leased at least once.
  constexpr int kTasks = 2 * kSamples * kTurns;
  EXPECT_GE(Value(page, "ptxbench_scheduler_leases_granted_total"), kTasks) << page;
  EXPECT_EQ(Value(page, "ptxbench_scheduler_leases_expired_total"), 0) << page;
  EXPECT_EQ(Value(page, "ptxbench_scheduler_transitions_total{machine=\"task\",event=\"complete\"}"),
            kTasks) << page;
  EXPECT_EQ(Value(page, "ptxbench_scheduler_transitions_total{machine=\"trajectory\",event=\"turn-limit\"}"),
            kSamples) << page;
  EXPECT_EQ(Value(page, "ptxbench_scheduler_trajectories{state=\"LIMITS_EXCEEDED\"}"), kSamples);
  EXPECT_EQ(Value(page, "ptxbench_scheduler_trajectories{state=\"AWAITING_MODEL\"}"), 0);
  EXPECT_EQ(Value(page, "ptxbench_scheduler_executors{kind=\"worker\",state=\"active\"}"), 1);
  EXPECT_EQ(Value(page, "ptxbench_scheduler_executors{kind=\"gateway\",state=\"active\"}"), 1);
  EXPECT_EQ(Value(page, "ptxbench_scheduler_leased_tasks{kind=\"eval\"}"), 0);
  EXPECT_GE(Value(page, "ptxbench_scheduler_lease_wait_seconds_count"), kTasks);
  EXPECT_GT(Value(page, "ptxbench_scheduler_commit_seconds_count"), 0);
  EXPECT_GT(Value(page, "ptxbench_scheduler_database_bytes{file=\"main\"}"), 0);
}

TEST_F(MetricsEndToEndTest, WorkerCountsEvaluationsAndGpuTime) {
  const std::string& page = Page("worker");
  ASSERT_FALSE(page.empty()) << Tail(cluster_->dir() + "/worker0.log");
  EXPECT_EQ(*worker_health_, "ok\n");
  // Every answer held a kernel: one evaluation per turn.
  EXPECT_EQ(Sum(page, "ptxbench_worker_evaluations_total"), kSamples * kTurns) << page;
  EXPECT_EQ(Value(page, "ptxbench_worker_compile_seconds_count"), kSamples * kTurns);
  double held = 0;
  for (const char* gpu : {"0", "1"}) {
    const std::string labels = std::string("{gpu=\"") + gpu + "\",model=\"Simulated H200\"}";
    const double h = Value(page, "ptxbench_worker_gpu_held_seconds_total" + labels);
    const double b = Value(page, "ptxbench_worker_gpu_busy_seconds_total" + labels);
    const double t = Value(page, "ptxbench_worker_gpu_timed_work_seconds_total" + labels);
    const double duty = Value(page, "ptxbench_worker_gpu_duty_cycle" + labels);
    EXPECT_GT(t, 0) << page;  // round robin: both GPUs were used
    EXPECT_LE(t, b);
    EXPECT_LE(b, h);
    EXPECT_NEAR(duty, t / h, 1e-6);
    held += h;
  }
  EXPECT_GT(held, 0);
  // The stats line with the duty cycle, every --stats-interval-s (1 s here).
  bool logged = false;
  for (int i = 0; i < 30 && !logged; ++i, usleep(100'000)) {
    logged = ReadFile(cluster_->dir() + "/worker0.log").value_or("").find("duty_cycle=") !=
             std::string::npos;
  }
  EXPECT_TRUE(logged) << Tail(cluster_->dir() + "/worker0.log");
}

TEST_F(MetricsEndToEndTest, GatewayCountsAnswers) {
  const std::string& page = Page("gateway");
  ASSERT_FALSE(page.empty()) << Tail(cluster_->dir() + "/gateway1.log");
  EXPECT_EQ(Value(page, "ptxbench_gateway_answers_total{model=\"fake-model\"}"), kSamples * kTurns);
}

TEST_F(MetricsEndToEndTest, EveryPagePassesPromtool) {
  if (system("command -v promtool >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "promtool not found (Debian package prometheus; scripts/setup.sh installs it)";
  }
  for (const auto& [daemon, page] : *pages_) {
    ASSERT_FALSE(page.empty()) << daemon;
    const auto [code, out] = Promtool(cluster_->dir(), daemon, page);
    EXPECT_EQ(code, 0) << daemon << ": promtool check metrics says\n" << out << "\n" << page;
  }
}

// Every metric a PromQL expression of deploy/grafana/ names is on a page.
TEST_F(MetricsEndToEndTest, DashboardNamesOnlyExposedMetrics) {
  std::set<std::string> exposed;
  for (const auto& [daemon, page] : *pages_) {
    for (const std::string& f : Families(page)) {
      exposed.insert(f);
      for (const char* suffix : {"_bucket", "_sum", "_count"}) exposed.insert(f + suffix);
    }
  }
  const std::regex name("ptxbench_[a-z0-9_]+");
  int dashboards = 0, exprs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(DataDir() + "/deploy/grafana")) {
    if (entry.path().extension() != ".json") continue;
    ++dashboards;
    const nlohmann::json board = nlohmann::json::parse(ReadFile(entry.path()).value_or("null"));
    std::vector<const nlohmann::json*> todo = {&board};
    while (!todo.empty()) {
      const nlohmann::json* j = todo.back();
      todo.pop_back();
      if (j->is_object() && j->contains("expr") && (*j)["expr"].is_string()) {
        const std::string expr = (*j)["expr"];
        ++exprs;
        for (std::sregex_iterator m(expr.begin(), expr.end(), name), end; m != end; ++m) {
          EXPECT_TRUE(exposed.count(m->str())) << entry.path() << ": " << m->str()
                                               << " is on no page (in " << expr << ")";
        }
      }
      if (j->is_structured()) {
        for (const auto& child : *j) todo.push_back(&child);
      }
    }
  }
  EXPECT_GE(dashboards, 1);
  EXPECT_GE(exprs, 10);
}

// docs/OBSERVABILITY.md lists every family the pages expose, and no other.
TEST_F(MetricsEndToEndTest, DocumentationListsEveryMetric) {
  std::set<std::string> exposed;
  for (const auto& [daemon, page] : *pages_) {
    for (const std::string& f : Families(page)) exposed.insert(f);
  }
  const std::string doc = ReadFile(DataDir() + "/docs/OBSERVABILITY.md").value_or("");
  std::set<std::string> listed;
  const std::regex row("\\n\\| `(ptxbench_[a-z0-9_]+)`");
  for (std::sregex_iterator m(doc.begin(), doc.end(), row), end; m != end; ++m) {
    listed.insert((*m)[1].str());
  }
  EXPECT_EQ(listed, exposed);
}

}  // namespace
}  // namespace ptxbench::testing
