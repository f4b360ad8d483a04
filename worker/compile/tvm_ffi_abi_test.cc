// Kernels in the TVM-FFI style of FlashInfer-Bench and PTXBench, built with
// ptxbench's compatibility headers and called through the generated
// trampoline exactly as the candidate host calls them (ptxb_entry), on host
// memory: the kernels here only read the tensor descriptions and write
// numbers, so no GPU is needed. On the GPU the same path is covered by
// worker/gpu_eval_gpu_test.cc.
#include <dlfcn.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ptxbench/kernel_abi.h"
#include "worker/compile/compiler.h"
#include "worker/compile/testing/vector_add.h"

namespace ptxbench::worker {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Writes what it sees into C (host memory here), and raises a ValueError
// when A and C disagree.
constexpr char kProbe[] = R"(#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/tvm_ffi.h>

namespace probe {
void run(tvm::ffi::TensorView A, tvm::ffi::TensorView B, tvm::ffi::TensorView C) {
  TVM_FFI_ICHECK_EQ(A.dtype(), (DLDataType{kDLFloat, 32, 1})) << "A is float32";
  TVM_FFI_CHECK(A.IsContiguous(), ValueError) << "A is contiguous";
  if (A.size(-1) != C.size(0)) {
    TVM_FFI_THROW(ValueError) << "A and C differ: " << A.size(-1) << " vs " << C.size(0);
  }
  float* c = static_cast<float*>(C.data_ptr());
  const float* b = static_cast<const float*>(B.data_ptr());
  c[0] = static_cast<float>(A.ndim());
  c[1] = static_cast<float>(A.numel());
  c[2] = static_cast<float>(A.device().device_type);
  c[3] = static_cast<float>(reinterpret_cast<uintptr_t>(
      TVMFFIEnvGetStream(C.device().device_type, C.device().device_id)));
  c[4] = static_cast<float>(A.stride(0));
  c[5] = b[7];
}
TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, probe::run);
}  // namespace probe
)";

workloads::Definition AddDefinition() { return testing::VectorAddDefinition(); }

using EntryFn = int (*)(const ptxb::Tensor* const*, int, cudaStream_t);
using LastErrorFn = const char* (*)();

class TvmFfiAbiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(CompilerOptions().nvcc)) {
      GTEST_SKIP() << "nvcc not found at " << CompilerOptions().nvcc << ": nothing to build with";
    }
    // The library links the driver API; where no driver is installed, the
    // toolkit's stub (same soname) stands in, which this test never calls.
    if (dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL) == nullptr &&
        dlopen("/usr/local/cuda/lib64/stubs/libcuda.so", RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      GTEST_SKIP() << "no libcuda.so.1 and no stub to load kernels with";
    }
    char tmpl[] = "/tmp/tvm_ffi_abi_test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    options_.cache_dir = dir_ + "/cache";
    options_.abi_include_dir = PTXB_KERNEL_ABI_DIR;
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  CompileResult Build(const std::string& source, const std::string& language = "cuda") {
    absl::StatusOr<CompileResult> r = Compiler(options_).Compile({source, language, &definition_, "sm_90a"});
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : CompileResult{};
  }

  // Loads a built library and calls its entry with A, B (n elements) and C
  // (c elements) on `stream`; returns ptxb_entry's code.
  int Call(const CompileResult& built, int64_t n, int64_t c, cudaStream_t stream) {
    void* lib = dlopen(built.artifact_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    EXPECT_NE(lib, nullptr) << dlerror();
    if (lib == nullptr) return -100;
    auto entry = reinterpret_cast<EntryFn>(dlsym(lib, "ptxb_entry"));
    auto last_error = reinterpret_cast<LastErrorFn>(dlsym(lib, "ptxb_last_error"));
    EXPECT_NE(entry, nullptr);
    EXPECT_NE(last_error, nullptr);
    for (int i = 0; i < 8; ++i) b_[i] = 10.0f + i;
    ptxb::Tensor a{a_, {n}, 1, ptxb::DType::kFloat32};
    ptxb::Tensor b{b_, {n}, 1, ptxb::DType::kFloat32};
    ptxb::Tensor out{c_, {c}, 1, ptxb::DType::kFloat32};
    const ptxb::Tensor* tensors[] = {&a, &b, &out};
    const int rc = entry(tensors, 3, stream);
    error_ = last_error();
    return rc;
  }

  std::string dir_;
  CompilerOptions options_;
  workloads::Definition definition_ = AddDefinition();
  float a_[8] = {}, b_[8] = {}, c_[8] = {};
  std::string error_;
};

TEST_F(TvmFfiAbiTest, AKernelInTheTvmFfiStyleSeesItsTensorsAndStream) {
  CompileResult built = Build(kProbe);
  ASSERT_EQ(built.status, v1::COMPILED) << built.log;
  ASSERT_EQ(Call(built, 8, 8, reinterpret_cast<cudaStream_t>(0x1234)), PTXB_ENTRY_OK) << error_;
  EXPECT_EQ(c_[0], 1);             // ndim
  EXPECT_EQ(c_[1], 8);             // numel
  EXPECT_EQ(c_[2], 2);             // device type kDLCUDA
  EXPECT_EQ(c_[3], 0x1234);        // the call's stream, through TVMFFIEnvGetStream
  EXPECT_EQ(c_[4], 1);             // dense strides
  EXPECT_EQ(c_[5], 17);            // B's data
}

TEST_F(TvmFfiAbiTest, AnErrorItRaisesReachesTheCallerWithItsKind) {
  CompileResult built = Build(kProbe);
  ASSERT_EQ(built.status, v1::COMPILED) << built.log;
  EXPECT_EQ(Call(built, 8, 4, nullptr), PTXB_ENTRY_EXCEPTION);
  EXPECT_EQ(error_, "ValueError: A and C differ: 8 vs 4");
}

TEST_F(TvmFfiAbiTest, AWrongParameterCountIsReportedAtTheCall) {
  CompileResult built = Build(R"(#include <tvm/ffi/tvm_ffi.h>
void run(tvm::ffi::TensorView A, tvm::ffi::TensorView C) {}
TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, run);
)");
  ASSERT_EQ(built.status, v1::COMPILED) << built.log;
  EXPECT_EQ(Call(built, 8, 8, nullptr), PTXB_ENTRY_EXCEPTION);
  EXPECT_THAT(error_, HasSubstr("Mismatched number of arguments when calling `run`: it takes 2 "
                                "but got 3"));
}

TEST_F(TvmFfiAbiTest, AMissingExportSaysWhatToExport) {
  CompileResult built = Build(R"(#include <tvm/ffi/tvm_ffi.h>
void forward(tvm::ffi::TensorView A, tvm::ffi::TensorView B, tvm::ffi::TensorView C) {}
TVM_FFI_DLL_EXPORT_TYPED_FUNC(forward, forward);
)");
  EXPECT_EQ(built.status, v1::COMPILE_ERROR);
  EXPECT_THAT(built.log, HasSubstr("The kernel exports no TVM-FFI function named 'run'"));
  EXPECT_THAT(built.log, HasSubstr("TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, run);"));
}

TEST_F(TvmFfiAbiTest, ASolutionOfSeveralFilesRunsItsOwnEntryPoint) {
  nlohmann::json solution = {
      {"name", "probe_solution"},
      {"definition", "vector_add"},
      {"author", "test"},
      {"spec",
       {{"language", "cuda"},
        {"target_hardware", {"H100"}},
        {"entry_point", "src/kernel.cu::vec_probe"},
        {"dependencies", nlohmann::json::array()},
        {"destination_passing_style", true}}},
      {"sources",
       {{{"path", "src/numbers.h"}, {"content", "#pragma once\ninline float Seven() { return 7; }\n"}},
        {{"path", "src/helper.cpp"}, {"content", "float Eleven() { return 11; }\n"}},
        {{"path", "src/kernel.cu"},
         {"content", R"(#include <tvm/ffi/tvm_ffi.h>
#include "src/numbers.h"
float Eleven();
void Probe(tvm::ffi::TensorView A, tvm::ffi::TensorView B, tvm::ffi::TensorView C) {
  static_cast<float*>(C.data_ptr())[0] = Seven() + Eleven();
}
TVM_FFI_DLL_EXPORT_TYPED_FUNC(vec_probe, Probe);
)"}}}}};
  CompileResult built = Build(solution.dump(), "solution");
  ASSERT_EQ(built.status, v1::COMPILED) << built.log;
  ASSERT_EQ(Call(built, 8, 8, nullptr), PTXB_ENTRY_OK) << error_;
  EXPECT_EQ(c_[0], 18);
  // A solution for another definition, or in an unsupported form, is the
  // submission's fault, said in one line.
  solution["definition"] = "gemm";
  built = Build(solution.dump(), "solution");
  EXPECT_EQ(built.status, v1::COMPILE_ERROR);
  EXPECT_THAT(built.log, HasSubstr("is for definition 'gemm', not 'vector_add'"));
  solution["definition"] = "vector_add";
  solution["spec"]["language"] = "triton";
  built = Build(solution.dump(), "solution");
  EXPECT_EQ(built.status, v1::COMPILE_ERROR);
  EXPECT_THAT(built.log, HasSubstr("spec.language \"triton\" is not supported"));
}

}  // namespace
}  // namespace ptxbench::worker
