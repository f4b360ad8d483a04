// The adversarial suite (docs/SECURITY.md): kernels that attack the
// measurement or the node, each evaluated for real on GPU 0 with the outcome
// it must get (worker/testdata/adversarial/*.cu say what each one tries).
// Beyond each case's own expectation, every evaluation must: never be an
// INFRA_ERROR (that would hide it from the model and retry it), leave no
// process behind, leave no file outside its directory, and carry none of
// the node's secrets in its result. Skips with "no CUDA GPU: ..." where
// there is none.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "common/data_dir.h"
#include "common/file.h"
#include "common/hash.h"
#include "testing/require_gpu.h"
#include "worker/gpu_eval.h"
#include "workloads/registry.h"

namespace ptxbench::worker {
namespace {

namespace v1 = ::ptxbench::v1;
namespace fs = std::filesystem;

constexpr char kGemm[] = "gemm_n7168_k5120";
constexpr char kGemmM70[] = "729b8d2e-8307-57e0-b6f5-d50957348534";
constexpr char kSecret[] = "sk-ptxbench-adversarial-secret-7731";
constexpr char kSecretFile[] = "/tmp/ptxb-adversarial-secret.txt";
constexpr const char* kEscapes[] = {"/tmp/ptxb-adversarial-escape",
                                    "/root/.cache/ptxb-adversarial-escape",
                                    "/usr/lib/ptxb-adversarial-escape", "/ptxb-adversarial-escape"};

// Processes of the machine whose command line mentions `needle`.
int ProcessesMentioning(const std::string& needle) {
  int found = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::ifstream in(entry.path() / "cmdline");
    std::stringstream text;
    text << in.rdbuf();
    if (absl::StrContains(text.str(), needle)) ++found;
  }
  return found;
}

class AdversarialTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("OPENAI_API_KEY", kSecret, 1);  // the worker's own environment
    std::ofstream(kSecretFile) << kSecret << "\n";
  }
  static void TearDownTestSuite() {
    unsetenv("OPENAI_API_KEY");
    fs::remove(kSecretFile);
  }

  void SetUp() override {
    PTXB_REQUIRE_GPU();
    auto registry = workloads::DefinitionRegistry::Load({});
    ASSERT_TRUE(registry.ok()) << registry.status();
    definitions_ = *std::move(registry);
    CompilerOptions c;
    c.abi_include_dir = DataDir() + "/worker/kernel_abi";
    c.cache_dir = (fs::temp_directory_path() / "ptxb_adversarial_test_cache").string();
    // The worker's own sandbox setup, with smaller limits.
    SandboxSettings settings;
    settings.memory_bytes = uint64_t{4} << 30;
    settings.max_processes = 64;
    const sandbox::Protections p = ConfigureSandbox(settings, &c, &options_);
    for (const std::string& a : p.active) std::cout << "protection: " << a << "\n";
    for (const std::string& w : p.warnings) std::cout << "missing: " << w << "\n";
    compiler_ = std::make_unique<Compiler>(c);
    auto inventory = gpu::DiscoverGpus();
    ASSERT_TRUE(inventory.ok() && !inventory->gpus.empty());
    gpu_ = inventory->gpus[0];
    ASSERT_FALSE(FindRunner().empty()) << "ptxbench-runner not found next to the test";
    for (const char* path : kEscapes) fs::remove(path);
  }

  v1::EvalResult Eval(const std::string& file) {
    GpuEvalOptions o = options_;
    o.runner_path = FindRunner();
    o.deadline = absl::Seconds(90);
    o.call_deadline = absl::Seconds(20);
    o.trials = 1;
    o.warmup_calls = 2;
    o.timed_calls = 10;
    GpuEvaluator evaluator(compiler_.get(), definitions_.get(), o, "adversarial", "test-toolkit");
    v1::EvalRequest r;
    r.set_definition(kGemm);
    r.set_language("cuda");
    // The attacks share the honest GEMM, prepended (worker/testdata/adversarial).
    const std::string prefix =
        absl::StartsWith(file, "adversarial/")
            ? ReadFile(DataDir() + "/worker/testdata/adversarial/simple_gemm.inc").value_or("")
            : "";
    r.set_kernel_source(prefix + ReadFile(DataDir() + "/worker/testdata/" + file).value_or(""));
    r.set_kernel_sha256(Sha256Hex(r.kernel_source()));
    r.set_mode(v1::FULL);
    r.add_workload_uuids(kGemmM70);
    bool suspect = false;
    v1::EvalResult result = evaluator.Evaluate(r, gpu_, &suspect);
    std::cout << file << ": " << v1::EvalStatus_Name(result.status());
    for (const v1::WorkloadTrace& t : result.traces()) {
      std::cout << " latency " << t.latency_ms() << " ms, reference " << t.reference_latency_ms()
                << " ms, speedup " << t.speedup();
      for (const std::string& e : t.errors()) std::cout << "\n  error: " << e.substr(0, 3000);
    }
    std::cout << "\n  wall " << result.wall_time_ms() << " ms\n";
    if (result.status() == v1::COMPILE_ERROR) std::cout << result.compile_log();
    // What every attack must get, whatever else it does.
    EXPECT_NE(result.status(), v1::INFRA_ERROR) << file << ": " << result.error();
    EXPECT_FALSE(absl::StrContains(result.DebugString(), kSecret)) << file << " leaked the secret";
    EXPECT_EQ(ProcessesMentioning("ptxbench-candidate-host"), 0) << file << " left a process";
    for (const char* path : kEscapes) EXPECT_FALSE(fs::exists(path)) << file << " wrote " << path;
    return result;
  }

  // The honest kernel's result with the same settings (once per suite).
  const v1::EvalResult& Honest() {
    static v1::EvalResult* honest = nullptr;
    if (honest == nullptr) honest = new v1::EvalResult(Eval("gemm/correct.cu"));
    return *honest;
  }
  void ExpectNoFasterThanHonest(const v1::EvalResult& r) {
    ASSERT_EQ(Honest().status(), v1::PASSED);
    ASSERT_EQ(r.status(), v1::PASSED) << r.DebugString();
    EXPECT_GT(r.traces(0).latency_ms(), 0.9 * Honest().traces(0).latency_ms())
        << "an attack made the same work measure faster";
  }
  static std::string Errors(const v1::EvalResult& r) {
    std::string all = r.error();
    for (const v1::WorkloadTrace& t : r.traces()) {
      for (const std::string& e : t.errors()) all += "\n" + e;
    }
    return all;
  }

  std::unique_ptr<workloads::DefinitionRegistry> definitions_;
  std::unique_ptr<Compiler> compiler_;
  GpuEvalOptions options_;
  gpu::GpuInfo gpu_;
};

TEST_F(AdversarialTest, ForgedResultsAreNotBelieved) {
  // Its outputs stay NaN; what it writes into its channel breaks the protocol.
  const v1::EvalStatus s = Eval("adversarial/forge_results.cu").status();
  EXPECT_TRUE(s == v1::INCORRECT_NUMERICAL || s == v1::RUNTIME_ERROR) << v1::EvalStatus_Name(s);
}

TEST_F(AdversarialTest, ForgingThenExitingIsTheKernelsRuntimeError) {
  v1::EvalResult r = Eval("adversarial/forge_and_exit.cu");
  EXPECT_EQ(r.status(), v1::RUNTIME_ERROR);
  EXPECT_TRUE(absl::StrContains(Errors(r), "exited with code 0")) << Errors(r);
}

TEST_F(AdversarialTest, BlindingTheTimersGainsNothing) {
  ExpectNoFasterThanHonest(Eval("adversarial/blind_timer.cu"));
}

TEST_F(AdversarialTest, TheExpectedOutputIsNotInTheCandidatesMemory) {
  EXPECT_EQ(Eval("adversarial/steal_expected.cu").status(), v1::INCORRECT_NUMERICAL);
}

TEST_F(AdversarialTest, ExitIsARuntimeErrorNotAnInfrastructureError) {
  v1::EvalResult r = Eval("adversarial/exit_zero.cu");
  EXPECT_EQ(r.status(), v1::RUNTIME_ERROR);
  EXPECT_TRUE(absl::StrContains(Errors(r), "exited with code 0")) << Errors(r);
  EXPECT_EQ(Eval("adversarial/exit_in_constructor.cu").status(), v1::RUNTIME_ERROR);
}

TEST_F(AdversarialTest, SignallingEverythingHurtsOnlyItself) {
  // It computes nothing: its signals reach no process outside its sandbox,
  // so it is judged on its (NaN) outputs, promptly.
  const absl::Time start = absl::Now();
  const v1::EvalStatus s = Eval("adversarial/kill_everything.cu").status();
  EXPECT_TRUE(s == v1::INCORRECT_NUMERICAL || s == v1::RUNTIME_ERROR) << v1::EvalStatus_Name(s);
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
  EXPECT_EQ(Honest().status(), v1::PASSED);
}

TEST_F(AdversarialTest, NoProcessOutlivesItsEvaluation) {
  Eval("adversarial/escape_daemon.cu");  // the survivors check is in Eval
}

TEST_F(AdversarialTest, SecretsOfTheNodeAreOutOfReach) {
  v1::EvalResult r = Eval("adversarial/read_secrets.cu");
  EXPECT_EQ(r.status(), v1::RUNTIME_ERROR);
  EXPECT_TRUE(absl::StrContains(Errors(r), "LOOT[")) << Errors(r);
}

TEST_F(AdversarialTest, NoNetwork) {
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(50555);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(listener, 8), 0);
  v1::EvalResult r = Eval("adversarial/network.cu");
  EXPECT_EQ(r.status(), v1::RUNTIME_ERROR);
  EXPECT_TRUE(absl::StrContains(Errors(r), "Operation not permitted")) << Errors(r);
  EXPECT_LT(accept(listener, nullptr, nullptr), 0) << "the kernel reached the network";
  close(listener);
}

TEST_F(AdversarialTest, HostMemoryExhaustionIsStoppedAtItsLimit) {
  v1::EvalResult r = Eval("adversarial/host_memory_bomb.cu");
  EXPECT_EQ(r.status(), v1::RUNTIME_ERROR);
  EXPECT_TRUE(absl::StrContains(Errors(r), "memory limit")) << Errors(r);
}

TEST_F(AdversarialTest, ForkBombIsStoppedAtItsLimit) {
  v1::EvalResult r = Eval("adversarial/fork_bomb.cu");
  EXPECT_EQ(r.status(), v1::RUNTIME_ERROR);
  EXPECT_TRUE(absl::StrContains(Errors(r), "process limit")) << Errors(r);
}

TEST_F(AdversarialTest, HugeOutputIsBounded) {
  v1::EvalResult r = Eval("adversarial/huge_output.cu");
  ExpectNoFasterThanHonest(r);
  EXPECT_LT(r.ByteSizeLong(), size_t{256} << 10);
}

TEST_F(AdversarialTest, WorkLeftRunningAfterTheCallFails) {
  EXPECT_EQ(Eval("adversarial/late_work.cu").status(), v1::INCORRECT_NUMERICAL);
}

TEST_F(AdversarialTest, ABackgroundKernelMakesNothingFaster) {
  ExpectNoFasterThanHonest(Eval("adversarial/background_spin.cu"));
}

TEST_F(AdversarialTest, PersistingL2MakesNothingFaster) {
  ExpectNoFasterThanHonest(Eval("adversarial/l2_persist.cu"));
}

TEST_F(AdversarialTest, VendorLibrariesCannotBeLoadedAtRunTime) {
  v1::EvalResult r = Eval("adversarial/dlopen_vendor.cu");
  EXPECT_EQ(r.status(), v1::RUNTIME_ERROR);
  EXPECT_TRUE(absl::StrContains(Errors(r), "no vendor library")) << Errors(r);
}

TEST_F(AdversarialTest, OtherProcessesCannotBeTracedOrRead) {
  v1::EvalResult r = Eval("adversarial/trace_harness.cu");
  EXPECT_EQ(r.status(), v1::RUNTIME_ERROR);
  EXPECT_FALSE(absl::StrContains(Errors(r), "attached")) << Errors(r);
  EXPECT_FALSE(absl::StrContains(Errors(r), "read ")) << Errors(r);
}

TEST_F(AdversarialTest, NothingIsWrittenOutsideItsDirectory) {
  Eval("adversarial/write_outside.cu");  // the files check is in Eval
}

}  // namespace
}  // namespace ptxbench::worker
