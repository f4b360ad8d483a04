// `ptxbench eval` in-process, compile-only (this machine has no GPU; the GPU path
// is covered by worker/gpu_eval_gpu_test.cc). Needs nvcc.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/cli.h"
#include "gtest/gtest.h"
#include "common/hash.h"
#include "nlohmann/json.hpp"
#include "workloads/testing/triton_solution.h"

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

TEST_F(EvalCommandTest, ASolutionJsonNamesItsOwnDefinition) {
  // A FlashInfer-Trace solution in the TVM-FFI style: two files, its entry point.
  nlohmann::json solution = {
      {"name", "copy_gemm"},
      {"definition", "gemm_n7168_k5120"},
      {"author", "test"},
      {"spec",
       {{"language", "cuda"},
        {"target_hardware", {"H100"}},
        {"entry_point", "main.cu::run"},
        {"destination_passing_style", true}}},
      {"sources",
       {{{"path", "tile.h"}, {"content", "#pragma once\nconstexpr int kTile = 32;\n"}},
        {{"path", "main.cu"},
         {"content", R"(#include <tvm/ffi/tvm_ffi.h>
#include <tvm/ffi/extra/c_env_api.h>
#include "tile.h"
__global__ void touch(char* c) { c[threadIdx.x] = 0; }
void run(tvm::ffi::TensorView A, tvm::ffi::TensorView B, tvm::ffi::TensorView C) {
  auto stream = static_cast<cudaStream_t>(TVMFFIEnvGetStream(C.device().device_type, C.device().device_id));
  touch<<<1, kTile, 0, stream>>>(static_cast<char*>(C.data_ptr()));
}
TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, run);
)"}}}}};
  std::string path = Write("eval_solution.json", solution.dump(2));
  Result r = Run({"eval", path, "--json"});
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  nlohmann::json e = nlohmann::json::parse(r.out);
  EXPECT_EQ(e["status"], "COMPILED") << e.dump(2);
  EXPECT_EQ(e["definition"], "gemm_n7168_k5120");

  Result other = Run({"eval", path, "--definition", "mha_with_lse_d128"});
  EXPECT_EQ(other.code, 2);
  EXPECT_NE(other.err.find("is for gemm_n7168_k5120"), std::string::npos) << other.err;

  solution["spec"]["binding"] = "torch";
  Result torch = Run({"eval", Write("eval_torch.json", solution.dump()), "--json"});
  EXPECT_EQ(torch.code, 1);
  EXPECT_NE(torch.err.find("spec.binding \"torch\" is not supported"), std::string::npos)
      << torch.err;
}

// A .py is a Triton kernel, and so is a Triton solution JSON: what is
// evaluated is its kernel.py (the envelope's hash is the module's, not the
// JSON's), here compile-only (no GPU), which the worker checks without
// Triton. A Triton solution of another shape is refused naming the field.
TEST_F(EvalCommandTest, TritonKernelsAreEvaluatedAsTheirKernelPy) {
  const std::string kernel = workloads::testing::TritonModule();
  Result py =
      Run({"eval", Write("kernel.py", kernel), "--definition", "gemm_n7168_k5120", "--json"});
  nlohmann::json e = nlohmann::json::parse(py.out, nullptr, false);
  ASSERT_TRUE(e.is_object()) << py.out << py.err;
  EXPECT_EQ(e["kernel_sha256"], Sha256Hex(kernel));
  EXPECT_EQ(e["definition"], "gemm_n7168_k5120");
  nlohmann::json solution = workloads::testing::TritonSolution(kernel);
  Result json = Run({"eval", Write("triton_solution.json", solution.dump()), "--json"});
  e = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_TRUE(e.is_object()) << json.out << json.err;
  EXPECT_EQ(e["kernel_sha256"], Sha256Hex(kernel)) << "the module was evaluated, not the JSON";
  solution["spec"]["entry_point"] = "kernel.py::main";
  Result main = Run({"eval", Write("triton_main.json", solution.dump())});
  EXPECT_EQ(main.code, 1);
  EXPECT_NE(main.err.find("is not \"<file>.py::run\""), std::string::npos) << main.err;
}

}  // namespace
}  // namespace ptxbench::cli
