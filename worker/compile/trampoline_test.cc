#include "worker/compile/testing/vector_add.h"
#include "worker/compile/trampoline.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ptxbench::worker {
namespace {

using ::testing::HasSubstr;

workloads::Definition AddDefinition() { return testing::VectorAddDefinition(); }

TEST(TrampolineTest, PtxbenchTrampolineMatchesTheDefinitionsArity) {
  workloads::Definition d = AddDefinition();
  std::string t = PtxbenchTrampoline(d);
  EXPECT_THAT(t, HasSubstr("void run(const ptxb::Tensor& A, const ptxb::Tensor& B, "
                           "ptxb::Tensor& C, cudaStream_t stream);"));
  EXPECT_THAT(t, HasSubstr("if (count != 3) return PTXB_ENTRY_BAD_COUNT;"));
  EXPECT_THAT(
      t,
      HasSubstr("run(*tensors[0], *tensors[1], const_cast<ptxb::Tensor&>(*tensors[2]), stream);"));
  d.inputs[0].name = "not an identifier";
  EXPECT_THAT(PtxbenchSignature(d), HasSubstr("const ptxb::Tensor& t0,"));
}

TEST(TrampolineTest, TheExportMacroMarksTheTvmFfiStyle) {
  EXPECT_EQ(DetectKernelAbi("PTXB_EXPORT void run(...)"), KernelAbi::kPtxbench);
  EXPECT_EQ(DetectKernelAbi("TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, ns::run);"), KernelAbi::kTvmFfi);
}

TEST(TrampolineTest, TvmFfiTrampolineCallsTheExportedEntry) {
  auto t = TvmFfiTrampoline(AddDefinition(), "gemm_n_4096");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(*t, HasSubstr("extern \"C\" int __tvm_ffi_gemm_n_4096(void* self"));
  EXPECT_THAT(*t, HasSubstr("if (count != 3) return PTXB_ENTRY_BAD_COUNT;"));
  EXPECT_THAT(*t, HasSubstr("TVMFFIEnvGetStream"));
  EXPECT_FALSE(TvmFfiTrampoline(AddDefinition(), "not-an-identifier").ok());
  EXPECT_THAT(TvmFfiExpectation(AddDefinition(), "run"),
              HasSubstr("void run(tvm::ffi::TensorView A, tvm::ffi::TensorView B, "
                        "tvm::ffi::TensorView C);"));
}

TEST(TrampolineTest, TvmFfiKernelsWithScalarInputsAreRefusedForNow) {
  workloads::Definition d = AddDefinition();
  d.inputs.push_back({"alpha", {}, true, "float32"});
  auto t = TvmFfiTrampoline(d, "run");
  EXPECT_EQ(t.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("scalar input 'alpha'"));
}

}  // namespace
}  // namespace ptxbench::worker
