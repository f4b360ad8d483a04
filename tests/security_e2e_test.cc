// The scheduler on a network, with the real binaries: where it refuses to
// listen, TLS (with and without client certificates), tokens made, used and
// revoked through the CLI, executors that stop when their token is revoked,
// and no token or key in any log or in the database.
#include <filesystem>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/tls.h"
#include "testing/unused_port.h"
#include "tests/cluster.h"

namespace ptxbench::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kSpec[] = R"({"name": "tls-run", "models": ["m"],
  "definitions": ["gemm_n7168_k5120"], "prompt_tags": ["ptxb-no-hint"], "samples": 2,
  "num_turns": 2, "target_speedup": 1.0})";

std::string LastLine(const std::string& text) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
  return lines.empty() ? "" : lines.back();
}

// Every file under `dir` but the token files themselves, with their bytes.
std::vector<std::pair<std::string, std::string>> FilesToSearch(const std::string& dir) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    const std::string path = entry.path().string();
    const std::string name = entry.path().filename().string();
    if (absl::EndsWith(name, ".token") || absl::EndsWith(name, ".key") ||
        absl::StrContains(path, "/tls/")) {
      continue;
    }
    out.emplace_back(path, ReadFile(path).value_or(""));
  }
  return out;
}

TEST(SecurityTest, PlaintextOffLoopbackIsRefusedUnlessInsecure) {
  Cluster c("sec_listen");
  const std::string all = absl::StrCat("0.0.0.0:", UnusedPort());
  CommandResult refused = RunCommand(
      {PTXB_SCHEDULER_BIN, "--listen", all, "--data-dir", c.dir()}, /*merge_stderr=*/true);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.out, HasSubstr("without TLS"));
  EXPECT_THAT(refused.out, HasSubstr("--insecure"));
  EXPECT_FALSE(std::filesystem::exists(c.dir() + "/ptxbench.db")) << "nothing half-created";
  CommandResult dashboard = RunCommand({PTXB_SCHEDULER_BIN, "--listen", c.address(),
                                       "--http-listen", all, "--data-dir", c.dir()},
                                      /*merge_stderr=*/true);
  EXPECT_EQ(dashboard.exit_code, 1);
  EXPECT_THAT(dashboard.out, HasSubstr("refusing to serve the dashboard"));
  EXPECT_FALSE(std::filesystem::exists(c.dir() + "/ptxbench.db")) << "nothing half-created";

  ASSERT_TRUE(c.StartScheduler({"--listen", all, "--insecure"})) << c.SchedulerLogTail();
  EXPECT_THAT(c.SchedulerLogTail(), HasSubstr("serving plaintext beyond loopback"));
}

TEST(SecurityTest, TlsTokensAndRevocationThroughTheRealBinaries) {
  Cluster c("sec_tls");
  absl::StatusOr<TestCertificates> certs = MakeTestCertificates(c.dir() + "/tls");
  ASSERT_TRUE(certs.ok()) << certs.status();
  ASSERT_TRUE(c.StartScheduler({"--tls-cert", certs->server_cert, "--tls-key", certs->server_key,
                                "--lease-ttl-ms", "2000", "--heartbeat-ms", "500"}))
      << c.SchedulerLogTail();
  auto cli = [&](std::vector<std::string> args) { return c.Cli(args, /*merge_stderr=*/true); };

  // Plaintext against the TLS port fails, saying what to try.
  CommandResult plain = c.Cli({"status", "--timeout", "3"}, /*merge_stderr=*/true);
  EXPECT_EQ(plain.exit_code, 1);
  EXPECT_THAT(plain.out, HasSubstr("pass --tls-ca FILE")) << plain.out;
  c.SetCliFlags({"--tls-ca", certs->ca});

  // Tokens through the CLI with the admin token of the data directory.
  CommandResult made = cli({"token", "create", "--role", "read", "--name", "reader"});
  ASSERT_EQ(made.exit_code, 0) << made.out;
  const std::string reader = LastLine(made.out);
  ASSERT_TRUE(absl::StartsWith(reader, "ptxb_")) << made.out;
  CommandResult worker_made = cli({"token", "create", "--role", "worker", "--name", "node-1"});
  ASSERT_EQ(worker_made.exit_code, 0) << worker_made.out;
  const std::string worker_token = LastLine(worker_made.out);
  const std::string gateway_token =
      LastLine(cli({"token", "create", "--role", "gateway", "--name", "gw-1"}).out);
  const std::string worker_file = c.WriteFile("node-1.token", worker_token);
  const std::string gateway_file = c.WriteFile("gw-1.token", gateway_token);
  std::filesystem::permissions(worker_file, std::filesystem::perms::owner_read |
                                                std::filesystem::perms::owner_write);
  std::filesystem::permissions(gateway_file, std::filesystem::perms::owner_read |
                                                 std::filesystem::perms::owner_write);

  // Executors over TLS with their own tokens run an experiment to its end.
  process::Process& worker = c.AddWorker(
      {"--token-file", worker_file, "--tls-ca", certs->ca, "--latency-ms", "5"});
  c.AddGateway({"--token-file", gateway_file, "--tls-ca", certs->ca, "--latency-ms", "5"});
  const std::string experiment = c.Submit(c.WriteFile("spec.json", kSpec));
  ASSERT_FALSE(experiment.empty()) << c.SchedulerLogTail();
  nlohmann::json status = c.WaitFinished(experiment, 120);
  EXPECT_EQ(status["trajectories"]["terminal"], 2) << status.dump() << c.SchedulerLogTail();

  // A read token reads and may not cancel; one clear line says why.
  auto as_reader = [&](std::vector<std::string> args) {
    args.insert(args.end(), {"--token-file", c.WriteFile("reader.token", reader)});
    std::filesystem::permissions(c.dir() + "/reader.token", std::filesystem::perms::owner_read);
    return cli(args);
  };
  EXPECT_EQ(as_reader({"status"}).exit_code, 0);
  CommandResult cancel = as_reader({"cancel", experiment});
  EXPECT_EQ(cancel.exit_code, 1);
  EXPECT_THAT(cancel.out, HasSubstr("PERMISSION_DENIED: Cancel needs a token of role admin or "
                                    "submit; token 'reader' has role read"));

  // Listed without the tokens themselves; revoked, a token stops working.
  CommandResult list = cli({"token", "list"});
  EXPECT_THAT(list.out, HasSubstr("node-1"));
  EXPECT_THAT(list.out, ::testing::Not(HasSubstr(worker_token)));
  ASSERT_EQ(cli({"token", "revoke", "reader"}).exit_code, 0);
  CommandResult revoked = as_reader({"status"});
  EXPECT_EQ(revoked.exit_code, 1);
  EXPECT_THAT(revoked.out, HasSubstr("UNAUTHENTICATED: unknown or revoked token"));

  // The worker whose token is revoked stops, saying why.
  ASSERT_EQ(cli({"token", "revoke", "node-1"}).exit_code, 0);
  bool ended = false;
  for (int i = 0; i < 300 && !ended; ++i) {
    ended = worker.Ended();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(ended) << "a worker whose token was revoked keeps running";
  EXPECT_THAT(ReadFile(c.dir() + "/worker0.log").value_or(""),
              HasSubstr("UNAUTHENTICATED"));

  // No token and no key in any log, output file or the database.
  const std::string admin = ReadFile(c.TokenFile()).value_or("");
  const std::string key = ReadFile(certs->server_key).value_or("");
  std::vector<std::string> key_lines = absl::StrSplit(key, '\n', absl::SkipEmpty());
  ASSERT_GE(key_lines.size(), 3u);
  c.KillScheduler();  // its WAL checkpointed or not, both files are searched
  const std::vector<std::string> secrets = {std::string(absl::StripAsciiWhitespace(admin)), reader,
                                            worker_token, gateway_token, key_lines[1]};
  int searched = 0;
  for (const auto& [path, bytes] : FilesToSearch(c.dir())) {
    ++searched;
    for (const std::string& secret : secrets) {
      ASSERT_GE(secret.size(), 20u);
      EXPECT_FALSE(absl::StrContains(bytes, secret)) << path << " holds a secret";
    }
  }
  EXPECT_GE(searched, 4) << "the logs and the database were searched";
}

TEST(SecurityTest, ClientCertificatesWhenTheSchedulerRequiresThem) {
  Cluster c("sec_mtls");
  absl::StatusOr<TestCertificates> certs = MakeTestCertificates(c.dir() + "/tls");
  ASSERT_TRUE(certs.ok()) << certs.status();
  ASSERT_TRUE(c.StartScheduler({"--tls-cert", certs->server_cert, "--tls-key", certs->server_key,
                                "--tls-client-ca", certs->ca}))
      << c.SchedulerLogTail();
  CommandResult without = c.Cli({"status", "--tls-ca", certs->ca, "--timeout", "3"}, true);
  EXPECT_EQ(without.exit_code, 1) << without.out;
  CommandResult with = c.Cli({"status", "--tls-ca", certs->ca, "--tls-cert", certs->client_cert,
                              "--tls-key", certs->client_key},
                             true);
  EXPECT_EQ(with.exit_code, 0) << with.out;
}

}  // namespace
}  // namespace ptxbench::testing
