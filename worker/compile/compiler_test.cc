#include "worker/compile/compiler.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/data_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/compile/testing/vector_add.h"
#include "common/file.h"
#include "workloads/registry.h"

namespace ptxbench::worker {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;

constexpr char kValidKernel[] = R"(#include "ptxbench/kernel_abi.h"

__global__ void add_kernel(const float* a, const float* b, float* c, long n) {
  __shared__ unsigned long long bar;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared.b64 [%0], 1;" ::"r"(
        static_cast<unsigned>(__cvta_generic_to_shared(&bar))));
  }
  __syncthreads();
  long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i] + static_cast<float>(bar & 0);
}

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  long n = C.numel();
  add_kernel<<<(n + 255) / 256, 256, 0, stream>>>(static_cast<const float*>(A.data),
      static_cast<const float*>(B.data), static_cast<float*>(C.data), n);
}
)";

constexpr char kRawPtx[] = R"(.version 8.0
.target sm_90a
.address_size 64

.visible .entry copy_kernel(.param .u64 src, .param .u64 dst, .param .u64 n)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<6>;
  .reg .f32 %f<2>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [src];
  ld.param.u64 %rd2, [dst];
  ld.param.u64 %rd5, [n];
  mov.u32 %r1, %tid.x;
  cvt.u64.u32 %rd3, %r1;
  setp.ge.u64 %p1, %rd3, %rd5;
  @%p1 bra DONE;
  mul.wide.u32 %rd4, %r1, 4;
  add.u64 %rd1, %rd1, %rd4;
  add.u64 %rd2, %rd2, %rd4;
  ld.global.f32 %f1, [%rd1];
  st.global.f32 [%rd2], %f1;
DONE:
  ret;
}
)";

workloads::Definition AddDefinition() { return testing::VectorAddDefinition(); }

std::string MakeTempDir() {
  std::string tmpl = (fs::temp_directory_path() / "compiler_test-XXXXXX").string();
  EXPECT_NE(mkdtemp(tmpl.data()), nullptr);
  return tmpl;
}

class CompilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(CompilerOptions().nvcc)) {
      GTEST_SKIP() << "nvcc not found at " << CompilerOptions().nvcc
                   << "; the compile path needs the CUDA toolkit";
    }
    dir_ = MakeTempDir();
    options_.cache_dir = dir_ + "/cache";
    options_.abi_include_dir = DataDir() + "/worker/kernel_abi";
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  absl::StatusOr<CompileResult> CompileCuda(const std::string& source) {
    Compiler compiler(options_);
    return compiler.Compile({source, "cuda", &definition_, "sm_90a"});
  }

  std::string dir_;
  CompilerOptions options_;
  workloads::Definition definition_ = AddDefinition();
};

TEST_F(CompilerTest, ValidKernelCompilesWithResourcesAndCensus) {
  auto r = CompileCuda(kValidKernel);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->status, ptxbench::v1::COMPILED) << r->log;
  EXPECT_FALSE(r->cache_hit);
  EXPECT_EQ(r->cache_key.size(), 64u);
  EXPECT_TRUE(fs::exists(r->artifact_path)) << r->artifact_path;
  EXPECT_TRUE(fs::exists(r->ptx_path)) << r->ptx_path;
  EXPECT_THAT(r->log, HasSubstr("Used"));
  ASSERT_EQ(r->resources.size(), 1u) << r->log;
  EXPECT_THAT(r->resources[0].kernel_name(), HasSubstr("add_kernel"));
  EXPECT_GT(r->resources[0].registers(), 0);
  EXPECT_GE(r->resources[0].shared_mem_bytes(), 8);
  EXPECT_THAT(r->ptx.instruction_counts(), Contains(Pair("mbarrier.", 1)));
  EXPECT_THAT(r->ptx.architecture_counts(), Contains(Pair("hopper", 1)));
  EXPECT_EQ(r->ptx.virtual_arch(), "sm_90a");
  EXPECT_GT(r->ptx.size_bytes(), 0);
}

// A cuobjdump that lists a build's SASS gives its census; one that lists no
// instruction gives none (the PTX census stands), never a census of nothing.
// Stand-ins here: this machine has no cuobjdump.
TEST_F(CompilerTest, AnEmptySassListingIsNoCensus) {
  fs::create_directories(dir_ + "/tool/bin");  // the sandbox sees the tool's root, read-only
  const std::string lister = dir_ + "/tool/bin/cuobjdump";
  std::ofstream(lister) << "#!/bin/sh\nprintf '        /*0070*/  UTMALDG.2D [UR8], [UR4] ;\\n"
                           "        /*0080*/  @P0 FFMA R1, R2, R3, R4 ;\\n'\n";
  fs::permissions(lister, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
  options_.cuobjdump = lister;
  auto listed = CompileCuda(absl::StrCat(kValidKernel, "// listed\n"));
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_TRUE(listed->sass.has_value()) << listed->log;
  EXPECT_EQ(listed->sass->instructions(), 2) << listed->sass->DebugString();
  EXPECT_THAT(listed->sass->architecture_counts(), Contains(Pair("hopper", 1)))
      << listed->sass->DebugString();

  std::ofstream(lister, std::ios::trunc) << "#!/bin/sh\necho 'cuobjdump info    : File does not contain device code'\n";
  auto empty = CompileCuda(absl::StrCat(kValidKernel, "// empty listing\n"));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_FALSE(empty->sass.has_value());
  EXPECT_THAT(empty->log, HasSubstr("no SASS census: cuobjdump listed no instructions"));
  EXPECT_THAT(empty->ptx.architecture_counts(), Contains(Pair("hopper", 1)));
}

TEST_F(CompilerTest, SecondCompileIsAFastCacheHit) {
  Compiler compiler(options_);
  const std::string source = absl::StrCat(kValidKernel, "// cache test\n");
  absl::Time t0 = absl::Now();
  auto first = compiler.Compile({source, "cuda", &definition_, "sm_90a"});
  absl::Duration cold = absl::Now() - t0;
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->status, ptxbench::v1::COMPILED) << first->log;
  t0 = absl::Now();
  auto second = compiler.Compile({source, "cuda", &definition_, "sm_90a"});
  absl::Duration warm = absl::Now() - t0;
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->cache_hit);
  EXPECT_FALSE(first->cache_hit);
  EXPECT_EQ(second->cache_key, first->cache_key);
  EXPECT_EQ(second->status, ptxbench::v1::COMPILED);
  EXPECT_EQ(second->log, first->log);
  EXPECT_EQ(second->artifact_path, first->artifact_path);
  ASSERT_EQ(second->resources.size(), 1u);
  EXPECT_EQ(second->resources[0].registers(), first->resources[0].registers());
  EXPECT_EQ(second->ptx.sha256(), first->ptx.sha256());
  EXPECT_THAT(second->ptx.instruction_counts(), Contains(Pair("mbarrier.", 1)));
  EXPECT_LT(warm * 10, cold) << "cold " << cold << " warm " << warm;

  // A different toolkit-independent input (the definition) is a different key.
  workloads::Definition other = definition_;
  other.outputs[0].name = "D";
  auto third = compiler.Compile({source, "cuda", &other, "sm_90a"});
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_NE(third->cache_key, first->cache_key);
}

// Kernels are built for the GPU that runs them: the same source for a
// Blackwell GPU is another build (another cache entry) with that target.
TEST_F(CompilerTest, TargetNamesTheArchitectureBuiltFor) {
  Compiler compiler(options_);
  const std::string source = absl::StrCat(kValidKernel, "// target test\n");
  auto hopper = compiler.Compile({source, "cuda", &definition_, "sm_90a"});
  auto blackwell = compiler.Compile({source, "cuda", &definition_, "sm_100a"});
  ASSERT_TRUE(hopper.ok() && blackwell.ok());
  ASSERT_EQ(blackwell->status, ptxbench::v1::COMPILED) << blackwell->log;
  EXPECT_NE(hopper->cache_key, blackwell->cache_key);
  EXPECT_EQ(hopper->ptx.virtual_arch(), "sm_90a");
  EXPECT_EQ(blackwell->ptx.virtual_arch(), "sm_100a");
  EXPECT_THAT(blackwell->log, HasSubstr("code=sm_100a"));
}

TEST_F(CompilerTest, SameSourceGivesTheSamePtxInAnyBuildDirectory) {
  // Two independent builds (no shared cache): -lineinfo must not leak the
  // build directory into the PTX, or its hash would differ every time.
  CompilerOptions a = options_, b = options_;
  a.cache_dir.clear();
  b.cache_dir.clear();
  const std::string source = absl::StrCat(kValidKernel, "// reproducibility test\n");
  auto first = Compiler(a).Compile({source, "cuda", &definition_, "sm_90a"});
  auto second = Compiler(b).Compile({source, "cuda", &definition_, "sm_90a"});
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_EQ(first->status, ptxbench::v1::COMPILED) << first->log;
  EXPECT_NE(first->ptx_path, second->ptx_path);
  EXPECT_EQ(first->ptx.sha256(), second->ptx.sha256());
}

TEST_F(CompilerTest, SyntaxErrorIsCompileErrorWithNvccMessage) {
  auto r = CompileCuda("#include \"ptxbench/kernel_abi.h\"\nint x = 1\nint y = 2;\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, ptxbench::v1::COMPILE_ERROR);
  EXPECT_THAT(r->log, HasSubstr("kernel.cu(3): error"));
  EXPECT_TRUE(r->artifact_path.empty());
  // Compile errors are cached too.
  auto again = CompileCuda("#include \"ptxbench/kernel_abi.h\"\nint x = 1\nint y = 2;\n");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->cache_hit);
  EXPECT_EQ(again->status, ptxbench::v1::COMPILE_ERROR);
}

TEST_F(CompilerTest, WrongArityNamesExpectedSignature) {
  auto r = CompileCuda(R"(#include "ptxbench/kernel_abi.h"
PTXB_EXPORT void run(const ptxb::Tensor& A, ptxb::Tensor& C, cudaStream_t stream) {}
)");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, ptxbench::v1::COMPILE_ERROR);
  EXPECT_THAT(r->log, HasSubstr("PTXB_EXPORT void run(const ptxb::Tensor& A, const "
                                "ptxb::Tensor& B, ptxb::Tensor& C, cudaStream_t stream)"));
}

TEST_F(CompilerTest, TheDriverApiIsLinkedForTmaDescriptors) {
  // Hopper kernels feed wgmma from TMA, whose descriptors only the driver
  // API builds; it links, and it is not a vendor library.
  auto r = CompileCuda(R"(#include <cuda.h>
#include "ptxbench/kernel_abi.h"
PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  CUtensorMap map;
  cuuint64_t dims[1] = {static_cast<cuuint64_t>(A.numel())};
  cuuint32_t box[1] = {64}, element_strides[1] = {1};
  if (cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 1, A.data, dims, nullptr,
                             box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                             CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
    throw 1;
  }
}
)");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, ptxbench::v1::COMPILED) << r->log;
}

TEST_F(CompilerTest, CublasInSourceIsLibraryFallback) {
  auto r = CompileCuda(R"(#include "ptxbench/kernel_abi.h"
#include <cublas_v2.h>
PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  cublasHandle_t h;
  cublasCreate(&h);
}
)");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, ptxbench::v1::LIBRARY_FALLBACK);
  EXPECT_EQ(r->library, "cuBLAS");
  EXPECT_THAT(r->log, HasSubstr("cuBLAS"));
}

TEST_F(CompilerTest, HiddenCublasCallIsLibraryFallbackFromTheLink) {
  // Token pasting hides the name from the source scan; the link reveals it.
  auto r = CompileCuda(R"(#include "ptxbench/kernel_abi.h"
#define VENDOR(x) cu##blas##x
extern "C" int VENDOR(Create_v2)(void**);
PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  void* h;
  VENDOR(Create_v2)(&h);
}
)");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, ptxbench::v1::LIBRARY_FALLBACK) << r->log;
  EXPECT_EQ(r->library, "cuBLAS");
}

// The module scan (gpu_image_scan.h) on what nvcc builds from honest
// sources: the five bundled definitions' simple kernels compile clean, none
// refused as unreadable and none taken for vendor code, with cuBLAS's kernel
// hashes looked up (the toolkit's libcublas; its kernels are hashed here in
// about a second).
TEST_F(CompilerTest, TheBundledSimpleKernelsPassTheModuleScan) {
  const char* kCublas = "/usr/local/cuda/lib64/libcublas.so";
  if (fs::exists(kCublas)) {
    auto table = VendorCodeTable::Build({{fs::canonical(kCublas).string(), "cuBLAS"}});
    ASSERT_TRUE(table.ok()) << table.status();
    EXPECT_GT((*table)->size(), 1000u);
    options_.vendor_code = std::move(*table);
  }
  auto registry = workloads::DefinitionRegistry::Load({});
  ASSERT_TRUE(registry.ok()) << registry.status();
  Compiler compiler(options_);
  for (const auto& [definition, file] : std::vector<std::pair<std::string, std::string>>{
           {"gemm_n7168_k5120", "gemm/correct.cu"},
           {"mha_with_lse_d128", "attention/mha_with_lse_d128.cu"},
           {"mha_with_lse_d128_causal", "attention/mha_with_lse_d128_causal.cu"},
           {"mha_bwd_d128", "attention/mha_bwd_d128.cu"},
           {"mha_bwd_d128_causal", "attention/mha_bwd_d128_causal.cu"}}) {
    absl::StatusOr<const workloads::Definition*> d = (*registry)->Find(definition);
    ASSERT_TRUE(d.ok()) << d.status();
    auto source = ReadFile(DataDir() + "/worker/testdata/" + file);
    ASSERT_TRUE(source.ok()) << source.status();
    auto r = compiler.Compile({*source, "cuda", *d, "sm_90a"});
    ASSERT_TRUE(r.ok()) << file << ": " << r.status();
    EXPECT_EQ(r->status, ptxbench::v1::COMPILED) << file << ": " << r->log;
  }
}

// worker/testdata/adversarial/padded_compressed_vendor_kernel.cu: a
// vendor-named kernel in nvcc's zstd fatbin, carried as data behind 300
// copies of the ELF magic. The old scan stopped after 256 hits and never
// decompressed: COMPILED.
TEST_F(CompilerTest, AVendorKernelPaddedAndCompressedIsLibraryFallback) {
  auto registry = workloads::DefinitionRegistry::Load({});
  ASSERT_TRUE(registry.ok()) << registry.status();
  absl::StatusOr<const workloads::Definition*> gemm = (*registry)->Find("gemm_n7168_k5120");
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  const std::string dir = DataDir() + "/worker/testdata/adversarial/";
  auto prefix = ReadFile(dir + "simple_gemm.inc");
  auto attack = ReadFile(dir + "padded_compressed_vendor_kernel.cu");
  ASSERT_TRUE(prefix.ok() && attack.ok());
  Compiler compiler(options_);
  auto r = compiler.Compile({*prefix + *attack, "cuda", *gemm, "sm_90a"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, ptxbench::v1::LIBRARY_FALLBACK) << r->log;
  EXPECT_EQ(r->library, "cuBLASLt");
  EXPECT_THAT(r->log, HasSubstr("nvjet_sm90_tst"));
  EXPECT_THAT(r->log, HasSubstr("the entry compressed at byte"));
}

// Bytes that start like an ELF image but are none: the module is refused
// as the kernel's COMPILE_ERROR saying where, never passed, never an
// infrastructure error (the old scan took them for data: COMPILED).
TEST_F(CompilerTest, AnImageTheScanCannotReadIsACompileError) {
  auto r = CompileCuda(absl::StrCat(
      "__attribute__((used)) static const char kNotAnImage[] = \"\\x7f\" \"ELF\\x02\\x01 no more\";\n",
      kValidKernel));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, ptxbench::v1::COMPILE_ERROR) << r->log;
  EXPECT_THAT(r->log, HasSubstr("an embedded image ptxbench cannot read at byte"));
}

TEST_F(CompilerTest, RawPtxAssemblesWithResources) {
  Compiler compiler(options_);
  auto r = compiler.Compile({kRawPtx, "ptx", nullptr, "sm_90a"});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->status, ptxbench::v1::COMPILED) << r->log;
  EXPECT_TRUE(fs::exists(r->artifact_path));
  EXPECT_THAT(r->artifact_path, HasSubstr(".cubin"));
  ASSERT_EQ(r->resources.size(), 1u) << r->log;
  EXPECT_EQ(r->resources[0].kernel_name(), "copy_kernel");
  EXPECT_GT(r->resources[0].registers(), 0);
  EXPECT_EQ(r->ptx.virtual_arch(), "sm_90a");

  auto bad = compiler.Compile({"  .version 8.0\n.target sm_90a\nfoo bar;\n", "ptx", nullptr, "sm_90a"});
  ASSERT_TRUE(bad.ok()) << bad.status();
  EXPECT_EQ(bad->status, ptxbench::v1::COMPILE_ERROR);
  EXPECT_THAT(bad->log, HasSubstr("error"));
}

TEST_F(CompilerTest, DeadlineKillIsTimeout) {
  // A toolkit of its own (the sandbox binds the tool's toolkit directory).
  fs::create_directories(dir_ + "/toolkit/bin");
  chmod(dir_.c_str(), 0755);
  const std::string fake = dir_ + "/toolkit/bin/nvcc";
  {
    std::ofstream out(fake);
    out << "#!/bin/sh\n"
           "if [ \"$1\" = --version ]; then echo 'Cuda compilation tools, release 0.0, fake'; "
           "exit 0; fi\n"
           "sleep 30\n";
  }
  chmod(fake.c_str(), 0755);
  options_.nvcc = fake;
  options_.deadline = absl::Milliseconds(500);
  const absl::Time start = absl::Now();
  auto r = CompileCuda(kValidKernel);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(r->status, ptxbench::v1::TIMEOUT);
  EXPECT_THAT(r->log, HasSubstr("deadline of 500ms"));
  // Cached like any verdict: the same source does not burn the compile
  // budget again.
  const absl::Time second = absl::Now();
  auto again = CompileCuda(kValidKernel);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->cache_hit);
  EXPECT_EQ(again->status, ptxbench::v1::TIMEOUT);
  EXPECT_THAT(again->log, HasSubstr("deadline of 500ms"));
  EXPECT_LT(absl::Now() - second, absl::Milliseconds(400));
}

TEST(CompilerInfraTest, MissingToolIsFailedPrecondition) {
  CompilerOptions options;
  options.nvcc = "/nonexistent/nvcc";
  Compiler compiler(options);
  workloads::Definition d = AddDefinition();
  auto r = compiler.Compile({kValidKernel, "cuda", &d, "sm_90a"});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("/nonexistent/nvcc"));
}

TEST(CompilerInfraTest, BadRequestsAreInvalidArgument) {
  Compiler compiler(CompilerOptions{});
  EXPECT_EQ(compiler.Compile({"x", "triton", nullptr, "sm_90a"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(compiler.Compile({"x", "cuda", nullptr, "sm_90a"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  // No target, or one that is not an architecture's: nothing is guessed.
  for (const char* target : {"", "sm_90", "compute_90a", "sm_90a -o /tmp/x"}) {
    EXPECT_EQ(compiler.Compile({kRawPtx, "ptx", nullptr, target}).status().code(),
              absl::StatusCode::kInvalidArgument)
        << target;
  }
}

TEST(CompilerInfraTest, ToolkitVersionNamesRelease) {
  if (!fs::exists(CompilerOptions().nvcc)) GTEST_SKIP() << "nvcc not found";
  auto v = Compiler::ToolkitVersion(CompilerOptions().nvcc);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_THAT(*v, HasSubstr("release"));
}

// Compile-time attacks (docs/SECURITY.md): the compiler runs in a sandbox
// whose view holds only the toolchain, the ABI header and the build
// directory, under a memory limit.
class CompilerSandboxTest : public CompilerTest {
 protected:
  void SetUp() override {
    CompilerTest::SetUp();
    if (IsSkipped()) return;
    // A secret of the node's, where a kernel might look for it.
    secret_path_ = dir_ + "/node_secret.txt";
    std::ofstream(secret_path_) << "PTXB-NODE-SECRET-1234\n";
    chmod(dir_.c_str(), 0755);
    chmod(secret_path_.c_str(), 0644);
  }
  std::string Kernel(const std::string& extra) { return absl::StrCat(extra, "\n", kValidKernel); }
  std::string secret_path_;
};

TEST_F(CompilerSandboxTest, IncludeOfDevZeroIsNotFoundAtOnce) {
  const absl::Time start = absl::Now();
  auto r = CompileCuda(Kernel("#include \"/dev/zero\""));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, ptxbench::v1::COMPILE_ERROR);
  EXPECT_THAT(r->log, HasSubstr("/dev/zero: No such file or directory"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(20));
}

TEST_F(CompilerSandboxTest, FilesOutsideTheToolchainAreNotFound) {
  for (const std::string& path :
       {secret_path_, std::string("/etc/passwd"), std::string("/root/.bashrc")}) {
    auto r = CompileCuda(Kernel(absl::StrCat("#include \"", path, "\"")));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->status, ptxbench::v1::COMPILE_ERROR) << path;
    EXPECT_THAT(r->log, HasSubstr("No such file or directory")) << path;
    EXPECT_THAT(r->log, Not(HasSubstr("PTXB-NODE-SECRET"))) << path;
    EXPECT_THAT(r->log, Not(HasSubstr("root:x:0:0"))) << path;
  }
}

TEST_F(CompilerSandboxTest, TheWorkersEnvironmentIsNotReadable) {
  setenv("PTXB_TEST_API_KEY", "sk-ptxb-compile-secret-99", 1);
  for (const char* path : {"/proc/self/environ", "/proc/1/environ"}) {
    auto r = CompileCuda(Kernel(absl::StrCat("#include \"", path, "\"")));
    ASSERT_TRUE(r.ok()) << r.status();
    // Its own scrubbed environment at most (the preprocessor's).
    EXPECT_THAT(r->log, Not(HasSubstr("sk-ptxb-compile-secret"))) << path;
  }
  unsetenv("PTXB_TEST_API_KEY");
}

TEST_F(CompilerSandboxTest, AssemblerIncbinCannotReadFilesEither) {
  auto r = CompileCuda(Kernel(absl::StrCat("asm(\".incbin \\\"", secret_path_, "\\\"\");")));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, ptxbench::v1::COMPILE_ERROR) << r->log;
  EXPECT_THAT(r->log, Not(HasSubstr("PTXB-NODE-SECRET")));
}

// The toolkit is in the compiler's view, but no vendor library of it: a
// source that carries one into its module (to write it out and load it at
// run time) gets an empty file, wherever it lies in the toolkit.
TEST_F(CompilerSandboxTest, VendorLibrariesOfTheToolkitCannotBeCarried) {
  const fs::path toolkit = fs::path(options_.nvcc).parent_path().parent_path();
  std::string vendor;
  for (const auto& entry :
       fs::recursive_directory_iterator(toolkit, fs::directory_options::skip_permission_denied)) {
    const std::string name = entry.path().filename().string();
    if (absl::StartsWith(name, "libcublasLt.so") && entry.is_regular_file()) {
      vendor = entry.path().string();
      break;
    }
  }
  if (vendor.empty()) GTEST_SKIP() << "no libcublasLt in " << toolkit;
  // The path split in two literals, as an attacker hides it from the
  // source scan.
  const size_t cut = vendor.rfind("libcubl") + 7;
  auto r = CompileCuda(Kernel(
      absl::StrCat("asm(\".section .rodata\\n.global carried\\ncarried: .incbin \\\"",
                   vendor.substr(0, cut), "\" \"", vendor.substr(cut), "\\\"\\n.previous\");")));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->status, ptxbench::v1::COMPILED) << r->log;
  EXPECT_LT(fs::file_size(r->artifact_path), fs::file_size(vendor) / 4)
      << vendor << " was carried into the module";
}

// What a source can carry into its module from the compiler's view (a
// toolchain file, .incbin), many times over, each build kept in the cache:
// one submitter varying its source would fill the worker's disk.
fs::path Cicc(const CompilerOptions& o) {
  return fs::path(o.nvcc).parent_path().parent_path() / "nvvm" / "bin" / "cicc";
}
std::string CarryCicc(const CompilerOptions& o) {
  return absl::StrCat("asm(\".section .rodata\\n.global carried\\ncarried: .incbin \\\"",
                      Cicc(o).string(), "\\\"\\n.previous\");");
}

TEST_F(CompilerSandboxTest, AModuleOverTheLimitIsACompileErrorAndIsNotKept) {
  ASSERT_GT(fs::file_size(Cicc(options_)), options_.module_bytes);
  auto r = CompileCuda(Kernel(CarryCicc(options_)));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, ptxbench::v1::COMPILE_ERROR) << r->log;
  EXPECT_THAT(r->log, HasSubstr("The build's kernel.so holds "));
  EXPECT_THAT(r->log, HasSubstr("may hold at most 32 MiB"));
  EXPECT_TRUE(r->artifact_path.empty());
  EXPECT_LT(BuildCache::BytesUnder(options_.cache_dir), 1 << 20) << "the module was kept";
  // Its verdict is kept: the same source is not built again.
  auto again = CompileCuda(Kernel(CarryCicc(options_)));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->cache_hit);
  EXPECT_EQ(again->status, ptxbench::v1::COMPILE_ERROR);
}

TEST_F(CompilerSandboxTest, AFileOverTheLimitStopsTheBuildAndLeavesNothing) {
  options_.sandbox.file_bytes = uint64_t{8} << 20;
  auto r = CompileCuda(Kernel(CarryCicc(options_)));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, ptxbench::v1::COMPILE_ERROR) << r->log;
  EXPECT_THAT(r->log, HasSubstr("A file of the build reached the compiler's limit of 8 MiB per file"));
  EXPECT_LT(BuildCache::BytesUnder(options_.cache_dir), 1 << 20) << "the build's files were kept";
}

TEST_F(CompilerTest, TheCacheKeepsToItsBound) {
  options_.cache_bytes = 1;  // every entry is over it
  options_.cache_grace = absl::Milliseconds(300);
  Compiler compiler(options_);
  auto first = compiler.Compile({absl::StrCat(kRawPtx, "// 1\n"), "ptx", nullptr, "sm_90a"});
  ASSERT_TRUE(first.ok()) << first.status();
  absl::SleepFor(absl::Milliseconds(400));
  auto second = compiler.Compile({absl::StrCat(kRawPtx, "// 2\n"), "ptx", nullptr, "sm_90a"});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(fs::exists(fs::path(options_.cache_dir) / first->cache_key))
      << "an entry unused for longer than the grace stayed over the bound";
  // The new one stays for its evaluation, over the bound or not.
  EXPECT_TRUE(fs::exists(second->artifact_path));
}

// A worker started by a Slurm job inherits its umask 077: the sources it
// writes must still be readable by the sandboxed tools.
TEST_F(CompilerSandboxTest, CompilesWhateverTheWorkersUmask) {
  const mode_t before = umask(077);
  auto cuda = CompileCuda(kValidKernel);
  auto ptx = Compiler(options_).Compile({kRawPtx, "ptx", nullptr, "sm_90a"});
  umask(before);
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  EXPECT_EQ(cuda->status, ptxbench::v1::COMPILED) << cuda->log;
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  EXPECT_EQ(ptx->status, ptxbench::v1::COMPILED) << ptx->log;
}

TEST_F(CompilerSandboxTest, MemoryBombIsACompileErrorAtTheLimit) {
  options_.sandbox.memory_bytes = uint64_t{256} << 20;
  options_.deadline = absl::Seconds(60);
  // 10^18 tokens of macro expansion: the preprocessor grows by about half
  // a gigabyte a second until something stops it.
  const char* bomb =
      "#define A(x) x x x x x x x x x x\n"
      "#define B(x) A(A(A(x)))\n"
      "#define C(x) B(B(B(x)))\n"
      "int ptxb_bomb[] = { C(C(1,)) 0 };\n";
  const absl::Time start = absl::Now();
  auto r = CompileCuda(Kernel(bomb));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, ptxbench::v1::COMPILE_ERROR) << r->log;
  EXPECT_THAT(r->log, HasSubstr("the compiler exceeded its memory limit (256 MiB)"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
}

}  // namespace
}  // namespace ptxbench::worker
