// Bad input gets one clear line, the right exit code, and no partial state:
// through the real binaries, as a user meets them.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "common/file.h"
#include "gtest/gtest.h"
#include "testing/unused_port.h"
#include "tests/cluster.h"
#include "workloads/testing/datasets.h"

namespace ptxbench::testing {
namespace {

int Lines(const std::string& text) {
  int n = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    n += absl::StrContains(line, "level=") ? 0 : 1;  // structured log lines aside
  }
  return n;
}

TEST(BadInputTest, SchedulerRefusesADatabaseThatIsNotOurs) {
  Cluster c("err_foreign");
  const std::string db = c.dir() + "/ptxbench.db";
  std::ofstream(db) << "these are someone else's notes\n";
  CommandResult r = RunCommand({PTXB_SCHEDULER_BIN, "--listen", c.address(), "--data-dir", c.dir()},
                               /*merge_stderr=*/true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(r.out, "is not a ptxbench database")) << r.out;
  EXPECT_EQ(Lines(r.out), 1) << r.out;
  EXPECT_EQ(ReadFile(db).value_or(""), "these are someone else's notes\n") << "the file was left alone";
}

TEST(BadInputTest, SchedulerRefusesANewerSchema) {
  Cluster c("err_newer");
  ASSERT_TRUE(c.StartScheduler()) << c.SchedulerLogTail();
  c.KillScheduler();
  {
    auto db = storage::Database::Open(c.dir() + "/ptxbench.db", {});
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE((*db)->Execute("PRAGMA user_version = 99").ok());
  }
  CommandResult r = RunCommand(
      {PTXB_SCHEDULER_BIN, "--listen", c.address(), "--data-dir", c.dir()}, /*merge_stderr=*/true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(r.out, "newer than this build supports")) << r.out;
  EXPECT_EQ(Lines(r.out), 1) << r.out;
}

TEST(BadInputTest, SchedulerRefusesADamagedDatabaseAtStart) {
  Cluster c("err_damaged");
  ASSERT_TRUE(c.StartScheduler()) << c.SchedulerLogTail();
  c.KillScheduler();
  const std::string db = c.dir() + "/ptxbench.db";
  {
    auto open = storage::Database::Open(db, {});
    ASSERT_TRUE(open.ok()) << open.status();
    ASSERT_TRUE((*open)->Execute("CREATE TABLE filler(v TEXT); BEGIN;").ok());
    for (int i = 0; i < 2000; ++i) {
      ASSERT_TRUE((*open)->Execute(absl::StrCat("INSERT INTO filler VALUES('", std::string(300, 'f'),
                                                i, "')")).ok());
    }
    ASSERT_TRUE((*open)->Execute("COMMIT; PRAGMA wal_checkpoint(TRUNCATE);").ok());
  }
  std::string bytes = ReadFile(db).value_or("");
  ASSERT_GT(bytes.size(), 256u * 1024);
  for (size_t i = bytes.size() / 2; i < bytes.size() / 2 + 16384; ++i) bytes[i] = '\x5a';
  std::ofstream(db, std::ios::binary | std::ios::trunc) << bytes;
  CommandResult r = RunCommand({PTXB_SCHEDULER_BIN, "--listen", c.address(), "--data-dir", c.dir()},
                               /*merge_stderr=*/true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(r.out, "failed SQLite's integrity check")) << r.out;
  EXPECT_EQ(Lines(r.out), 1) << r.out;
}

TEST(BadInputTest, UnreachableSchedulerIsOneLineAndExitOne) {
  CommandResult r = RunCommand(
      {PTXB_CLI_BIN, "--scheduler", "127.0.0.1:" + std::to_string(UnusedPort()), "--timeout", "2",
       "status"},
      /*merge_stderr=*/true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(r.out, "cannot reach scheduler")) << r.out;
  EXPECT_EQ(Lines(r.out), 1) << r.out;
}

TEST(BadInputTest, InvalidSpecsCreateNothing) {
  Cluster c("err_specs");
  ASSERT_TRUE(c.StartScheduler({"--max-trajectories", "100"})) << c.SchedulerLogTail();
  struct Case {
    const char* spec;
    const char* expect;
  } cases[] = {
      {R"({"name": "x", "models": ["m"], )", "malformed JSON"},
      {R"({"name": "x", "models": ["m"], "definitions": ["no_such_def"],
          "prompt_tags": ["ptxb-no-hint"], "samples": 1, "num_turns": 1,
          "target_speedup": 1})",
       "$.definitions[0]: expected a known definition, found \"no_such_def\"; unknown definition"},
      {R"({"name": "x", "models": ["m"], "definitions": ["gemm_n7168_k5120"],
          "prompt_tags": ["no-such-tag"], "samples": 1, "num_turns": 1,
          "target_speedup": 1})",
       "$.prompt_tags[0]: expected a known prompt tag, found \"no-such-tag\"; unknown prompt tag"},
      {R"({"name": "x", "models": ["m"], "definitions": ["gemm_n7168_k5120"],
          "prompt_tags": ["ptxb-no-hint"], "samples": 0, "num_turns": 1,
          "target_speedup": 1})",
       "$.samples: expected an integer from 1 to 2147483647, found 0"},
      {R"({"name": "x", "models": ["m"], "definitions": ["gemm_n7168_k5120"],
          "prompt_tags": ["ptxb-no-hint"], "samples": 1, "num_turns": 1,
          "target_speedup": 1, "colour": "blue"})",
       "$.colour: expected a known key (name, models,"},
      {R"({"name": "x", "models": ["m"], "definitions": ["gemm_n7168_k5120"],
          "prompt_tags": ["ptxb-no-hint"], "samples": 101, "num_turns": 1,
          "target_speedup": 1})",
       "$.samples: expected at most 100 trajectories in all, found 101; 1 models x"},
  };
  for (const Case& k : cases) {
    std::string path = c.WriteFile("bad.json", k.spec);
    CommandResult r = RunCommand(
        {PTXB_CLI_BIN, "--scheduler", c.address(), "--data-dir", c.dir(), "submit", path}, /*merge_stderr=*/true);
    EXPECT_EQ(r.exit_code, 1) << k.spec;
    EXPECT_TRUE(absl::StrContains(r.out, k.expect)) << r.out;
    EXPECT_TRUE(absl::StrContains(r.out, "bad.json")) << "names the file: " << r.out;
    EXPECT_EQ(Lines(r.out), 1) << r.out;
  }
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM experiments"), 0);
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM trajectories"), 0);

  // A duplicate name with a different spec: refused, the first one intact.
  std::string good = c.WriteFile("good.json", R"({"name": "dup", "models": ["m"],
      "definitions": ["gemm_n7168_k5120"], "prompt_tags": ["ptxb-no-hint"], "samples": 2,
      "num_turns": 1, "target_speedup": 1})");
  ASSERT_FALSE(c.Submit(good).empty());
  std::string other = c.WriteFile("other.json", R"({"name": "dup", "models": ["m"],
      "definitions": ["gemm_n7168_k5120"], "prompt_tags": ["ptxb-no-hint"], "samples": 3,
      "num_turns": 1, "target_speedup": 1})");
  CommandResult dup = RunCommand({PTXB_CLI_BIN, "--scheduler", c.address(), "--data-dir", c.dir(), "submit", other},
                                 /*merge_stderr=*/true);
  EXPECT_EQ(dup.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(dup.out, "already exists")) << dup.out;
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM trajectories"), 2);

  CommandResult usage = RunCommand({PTXB_CLI_BIN, "submit", good, "--frobnicate"},
                                   /*merge_stderr=*/true);
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(usage.out, "--frobnicate")) << usage.out;
}

// "A definition whose reference cannot run anywhere in the cluster is
// refused at submit, before any model is called."
TEST(BadInputTest, ADefinitionNoWorkerCanEvaluateIsRefusedAtSubmit) {
  Cluster c("err_reference");
  ASSERT_TRUE(c.StartScheduler({"--dataset", workloads::testing::RmsNormDataset()}))
      << c.SchedulerLogTail();
  const std::string spec = c.WriteFile("rms.json", R"({"name": "rms", "models": ["m"],
      "definitions": ["rmsnorm_h4096"], "prompt_tags": ["ptxb-no-hint"], "samples": 1,
      "num_turns": 1, "target_speedup": 1})");
  CommandResult r = RunCommand({PTXB_CLI_BIN, "--scheduler", c.address(), "--data-dir", c.dir(), "submit", spec},
                               /*merge_stderr=*/true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(
      r.out, "definition rmsnorm_h4096 has no native reference (definition rmsnorm_h4096 "
             "(op_type rmsnorm): this build has no native reference for it) and no registered "
             "GPU worker can run its PyTorch reference: start a worker with --torch-python PATH "
             "(a Python with torch and CUDA)"))
      << r.out;
  EXPECT_EQ(Lines(r.out), 1) << r.out;
  EXPECT_EQ(c.QueryInt("SELECT count(*) FROM experiments"), 0);
  // Compile-only evaluation runs no reference.
  EXPECT_FALSE(c.Cli({"submit", spec, "--name", "rms-compile", "--eval", "compile-only",
                      "--output", "json"})
                   .exit_code);
  // A simulated GPU worker computes no reference: it takes any definition.
  c.AddWorker();
  std::string accepted;
  for (int i = 0; i < 100 && accepted.empty(); ++i) {
    accepted = c.Submit(spec);
    if (accepted.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_FALSE(accepted.empty()) << "refused with a simulated GPU worker registered";
}

}  // namespace
}  // namespace ptxbench::testing
