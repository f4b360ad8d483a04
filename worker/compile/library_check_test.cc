#include "worker/compile/library_check.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "process/run.h"

namespace ptxbench::worker {
namespace {

TEST(LibraryCheckTest, FindsIncludes) {
  EXPECT_EQ(DetectLibraryInSource("#include <cublas_v2.h>\n").library, "cuBLAS");
  EXPECT_EQ(DetectLibraryInSource("#include <cublasLt.h>\n").library, "cuBLASLt");
  EXPECT_EQ(DetectLibraryInSource("#  include \"cudnn.h\"\n").library, "cuDNN");
  EXPECT_EQ(DetectLibraryInSource("#include \"cutlass/gemm/device/gemm.h\"\n").library, "CUTLASS");
  EXPECT_EQ(DetectLibraryInSource("#include <cublas_v2.h>\n").evidence, "#include <cublas_v2.h>");
}

TEST(LibraryCheckTest, FindsApiUseWithoutIncludes) {
  EXPECT_EQ(DetectLibraryInSource("extern int cublasCreate_v2(void**);").library, "cuBLAS");
  EXPECT_EQ(DetectLibraryInSource("x = cublasLtMatmul(h);").library, "cuBLASLt");
  EXPECT_EQ(DetectLibraryInSource("auto m = CUDNN_DATA_HALF;").library, "cuDNN");
  EXPECT_EQ(DetectLibraryInSource("using G = cutlass::gemm::device::Gemm<>;").library, "CUTLASS");
  EXPECT_EQ(DetectLibraryInSource("dlopen(\"libcublas.so.13\", RTLD_NOW);").library, "cuBLAS");
}

TEST(LibraryCheckTest, IgnoresCommentsAndLookalikes) {
  LibraryUse use = DetectLibraryInSource(
      "// faster than cublasGemmEx, see #include <cublas_v2.h>\n"
      "/* cudnnConvolutionForward */\n"
      "__global__ void my_cublas_like_gemm(float* x) { const char* s = \"a // b\"; }\n"
      "#include <cuda_bf16.h>\n");
  EXPECT_FALSE(use.found()) << use.library << ": " << use.evidence;
}

TEST(LibraryCheckTest, FindsUndefinedReferencesInLinkLog) {
  LibraryUse use = DetectLibraryInLinkLog(
      "/usr/bin/ld: kernel.o: in function `run':\n"
      "kernel.cu:(.text+0x1f): undefined reference to `cublasSgemm_v2'\n");
  EXPECT_EQ(use.library, "cuBLAS");
  EXPECT_FALSE(DetectLibraryInLinkLog("undefined reference to `run(float*)'").found());
}

TEST(LibraryCheckTest, ElfOfPlainLibraryIsClean) {
  // Any shared object of the system will do: libc needs no vendor library.
  for (const char* path :
       {"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6"}) {
    auto use = DetectLibraryInElf(path);
    if (!use.ok()) continue;
    EXPECT_FALSE(use->found()) << use->evidence;
    return;
  }
  GTEST_SKIP() << "no libc.so.6 found to read";
}

TEST(LibraryCheckTest, ElfLinkedAgainstCublasIsFound) {
  namespace fs = std::filesystem;
  const char* kCxx = "/usr/bin/g++";
  const char* kCublas = "/usr/local/cuda/lib64/libcublas.so";
  if (!fs::exists(kCxx) || !fs::exists(kCublas)) {
    GTEST_SKIP() << "needs " << kCxx << " and " << kCublas;
  }
  std::string dir = (fs::temp_directory_path() / "library_check_test-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  std::ofstream(dir + "/lib.cc")
      << "extern \"C\" int cublasCreate_v2(void**);\n"
         "extern \"C\" int f() { void* h; return cublasCreate_v2(&h); }\n";
  process::RunOptions opts;
  opts.argv = {kCxx,       "-shared", "-fPIC", "lib.cc", "-L/usr/local/cuda/lib64",
               "-lcublas", "-o",      "lib.so"};
  opts.cwd = dir;
  auto built = process::Run(opts);
  ASSERT_TRUE(built.ok()) << built.status();
  ASSERT_TRUE(built->ok()) << built->output;
  auto use = DetectLibraryInElf(dir + "/lib.so");
  fs::remove_all(dir);
  ASSERT_TRUE(use.ok()) << use.status();
  EXPECT_EQ(use->library, "cuBLAS");
  EXPECT_THAT(use->evidence, ::testing::HasSubstr("libcublas"));  // DT_NEEDED comes first
}

// A submission that carries a vendor library inside itself (to write it out
// and load it at run time) is found by what it carries, however the source
// hid the bytes' origin; a carried library of anything else is not evidence.
TEST(LibraryCheckTest, ALibraryCarriedInsideIsFound) {
  namespace fs = std::filesystem;
  const char* kCxx = "/usr/bin/g++";
  if (!fs::exists(kCxx)) GTEST_SKIP() << "needs " << kCxx;
  std::string dir = (fs::temp_directory_path() / "library_check_test-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  auto build = [&](const std::string& source, const std::vector<std::string>& extra) {
    std::ofstream(dir + "/src.cc") << source;
    process::RunOptions opts;
    opts.argv = {kCxx, "-shared", "-fPIC", "src.cc"};
    opts.argv.insert(opts.argv.end(), extra.begin(), extra.end());
    opts.cwd = dir;
    auto built = process::Run(opts);
    ASSERT_TRUE(built.ok()) << built.status();
    ASSERT_TRUE(built->ok()) << built->output;
  };
  build("extern \"C\" int cublasLtCreate(void** h) { *h = 0; return 0; }\n",
        {"-Wl,-soname,libcublasLt.so.13", "-o", "vendor.so"});
  build("extern \"C\" int helper() { return 7; }\n",
        {"-Wl,-soname,libhelper.so", "-o", "plain.so"});
  const std::string carrier =
      "asm(\".section .rodata\\n.global blob\\nblob: .incbin \\\"%s\\\"\\n.previous\");\n"
      "extern \"C\" int run() { return 0; }\n";
  build(absl::StrReplaceAll(carrier, {{"%s", "vendor.so"}}), {"-o", "carrier.so"});
  auto use = DetectLibraryInElf(dir + "/carrier.so");
  ASSERT_TRUE(use.ok()) << use.status();
  EXPECT_EQ(use->library, "cuBLASLt");
  EXPECT_THAT(use->evidence, ::testing::HasSubstr("libcublasLt.so.13"));
  EXPECT_THAT(use->evidence, ::testing::HasSubstr("carried at byte"));
  build(absl::StrReplaceAll(carrier, {{"%s", "plain.so"}}), {"-o", "carrier.so"});
  use = DetectLibraryInElf(dir + "/carrier.so");
  fs::remove_all(dir);
  ASSERT_TRUE(use.ok()) << use.status();
  EXPECT_FALSE(use->found()) << use->evidence;
}

TEST(LibraryCheckTest, ElfRejectsNonElf) {
  auto use = DetectLibraryInElf("/proc/self/cmdline");
  EXPECT_EQ(use.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(DetectLibraryInElf("/nonexistent.so").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace ptxbench::worker
