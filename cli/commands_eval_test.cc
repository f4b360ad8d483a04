// `ptxbench eval` in-process, compile-only (this machine has no GPU; the GPU path
// is covered by worker/gpu_eval_gpu_test.cc). Needs nvcc.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/cli.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace ptxbench::cli {
namespace {

constexpr char kKernel[] = R"(#include "ptxbench/kernel_abi.h"
__global__ void touch(char* c) { c[threadIdx.x] = 0; }
PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  touch<<<1, 32, 0, stream>>>(static_cast<char*>(C.data));
}
)";

struct Result {
  int code;
  std::string out, err;
};

class EvalCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists("/usr/local/cuda/bin/nvcc")) {
      GTEST_SKIP() << "nvcc not found at /usr/local/cuda/bin/nvcc: eval cannot build here";
    }
  }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = ::testing::TempDir() + "/" + std::to_string(getpid()) + "_" + name;
    std::ofstream(path) << text;
    return path;
  }
  Result Run(std::vector<std::string> args) {
    std::ostringstream out, err;
    CliEnvironment env;
    env.out = &out;
    env.err = &err;
    int code = RunCli(args, env);
    return {code, out.str(), err.str()};
  }
};

TEST_F(EvalCommandTest, BuildsPrintsTheEnvelopeAndUsesTheExitCodes) {
  std::string good = Write("eval_good.cu", kKernel);
  Result r = Run({"eval", good, "--definition", "gemm_n7168_k5120", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json e = nlohmann::json::parse(r.out);
  EXPECT_EQ(e["schema"], "ptxbench.eval.v1");
  EXPECT_EQ(e["status"], "COMPILED");
  EXPECT_EQ(e["all_passed"], false) << "compile-only never passes";
  EXPECT_EQ(e["definition"], "gemm_n7168_k5120");
  EXPECT_EQ(e["kernel_sha256"].get<std::string>().size(), 64u);

  Result bad = Run({"eval", Write("eval_bad.cu", "void run( {"), "--definition",
                    "gemm_n7168_k5120"});
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.out.find("COMPILE_ERROR"), std::string::npos) << bad.out;

  Result unknown = Run({"eval", good, "--definition", "no_such_definition"});
  EXPECT_EQ(unknown.code, 1);
  EXPECT_NE(unknown.err.find("unknown definition 'no_such_definition'"), std::string::npos);

  EXPECT_EQ(Run({"eval", good}).code, 2) << "--definition is required";
  EXPECT_EQ(Run({"eval", "/nonexistent/kernel.cu", "--definition", "gemm_n7168_k5120"}).code, 1);
}

}  // namespace
}  // namespace ptxbench::cli
