#include "worker/runner/measure/census.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "worker/runner/wire/protocol.h"

namespace ptxbench::runner {
namespace {

namespace v1 = ptxbench::v1;

constexpr char kOwn[] = "0123456789abcdefa";     // loaded after the submission
constexpr char kBefore[] = "fedcba9876543210b";  // loaded before it (the host's, torch's)

CensusEntry Entry(const std::string& image, const std::string& name, int64_t ns, int64_t launches = 1) {
  return CensusEntry{image, launches, ns, name};
}

std::string Call(std::vector<CensusEntry> entries, int64_t busy_ns) {
  CallCensus c;
  c.entries = std::move(entries);
  c.busy_ns = busy_ns;
  return EncodeCallCensus(c);
}

CensusRules Cuda() { return CensusRules{"cuda", {}, ""}; }
CensusRules Triton() { return CensusRules{"triton", {"0123456789abcdef"}, ""}; }

TEST(CensusTest, TheWireFormRoundTripsAndStaysInOneReply) {
  CallCensus c;
  c.busy_ns = 123456;
  for (int i = 0; i < 40; ++i) {
    c.entries.push_back(Entry(kOwn, absl::StrCat(std::string(300, 'k'), i), 1000 + i));
  }
  c.entries.push_back(Entry("-", "[memset]", 5, 2));
  const std::string wire = EncodeCallCensus(c);
  EXPECT_LE(wire.size(), protocol::kMaxReplyText);
  absl::StatusOr<CallCensus> back = DecodeCallCensus(wire);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << wire;
  EXPECT_EQ(back->busy_ns, 123456);
  ASSERT_EQ(back->entries.size(), kMaxCensusEntries);
  EXPECT_EQ(back->more, 41 - static_cast<int64_t>(kMaxCensusEntries));
  EXPECT_EQ(back->entries[0].ns, 1039);  // largest first
  EXPECT_EQ(back->entries[0].name.size(), kMaxCensusName);
}

TEST(CensusTest, AnythingButTheWireFormIsRefused) {
  for (const std::string& bad : std::vector<std::string>{
           "", "census", "census busy=1", "census busy=-1 more=0", "census busy=1 more=0 x",
        "done\ncensus busy=1 more=0", "census busy=1 more=0\nk 0123 1 1 name",
        "census busy=1 more=0\nk 0123456789ABCDEFa 1 1 name",
        "census busy=1 more=0\nk ? -1 1 name", "census busy=1 more=0\nk ? 1 1",
        "census busy=1 more=0\nq ? 1 1 name",
        absl::StrCat("census busy=1 more=0\nk ? 1 1 ", std::string(kMaxCensusName + 1, 'n'))}) {
    EXPECT_FALSE(DecodeCallCensus(bad).ok()) << bad;
  }
  std::string many = "census busy=1 more=0\n";
  for (size_t i = 0; i <= kMaxCensusEntries; ++i) absl::StrAppend(&many, "k ? 1 1 n", i, "\n");
  EXPECT_FALSE(DecodeCallCensus(many).ok());
}

TEST(CensusTest, OriginsByImageAndName) {
  // A build: what loaded after the submission is its own.
  EXPECT_EQ(OriginOf(Cuda(), Entry(kOwn, "gemm", 1)), v1::SUBMISSION);
  EXPECT_EQ(OriginOf(Cuda(), Entry(kBefore, "gemm", 1)), v1::LIBRARY);
  // Triton: only the JIT's images, whenever they loaded; torch loads late too.
  EXPECT_EQ(OriginOf(Triton(), Entry("0123456789abcdefb", "matmul_kernel", 1)), v1::SUBMISSION);
  EXPECT_EQ(OriginOf(Triton(), Entry("1111111111111111a", "sm90_xmma_gemm_bf16", 1)), v1::LIBRARY);
  // Fills and same-dtype copies of a library are memory work; a cast is not.
  const std::string fill =
      "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEvi";
  const std::string copy = "_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_23direct_copy_kernel_cuda";
  const std::string cast = "_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_16float8_copy_kernel";
  EXPECT_EQ(OriginOf(Triton(), Entry("2222222222222222a", fill, 1)), v1::MEMORY);
  EXPECT_EQ(OriginOf(Triton(), Entry("2222222222222222a", copy, 1)), v1::MEMORY);
  EXPECT_EQ(OriginOf(Triton(), Entry("2222222222222222a", cast, 1)), v1::LIBRARY);
  EXPECT_EQ(OriginOf(Triton(), Entry("-", "[memset]", 1)), v1::MEMORY);
  // Nobody's, or several images': not the submission's.
  EXPECT_EQ(OriginOf(Cuda(), Entry("?", "gemm", 1)), v1::LIBRARY);
  EXPECT_EQ(OriginOf(Cuda(), Entry("*", "gemm", 1)), v1::LIBRARY);
  EXPECT_EQ(OriginOf(Triton(), Entry("?", fill, 1)), v1::LIBRARY);
}

TEST(CensusTest, TheSubmissionsOwnKernelsAreNoFallback) {
  CensusTally t(Triton());
  for (int i = 0; i < 5; ++i) {
    t.Add(Call({Entry("0123456789abcdefb", "matmul_kernel", 990000),
                Entry("2222222222222222a",
                      "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEE", 8000)},
               998000),
          1.0, false);
  }
  EXPECT_FALSE(t.fallback()) << t.Finding();
  const v1::KernelCensus s = t.Summary(true);
  EXPECT_EQ(s.calls_seen(), 5);
  EXPECT_EQ(s.calls_timed(), 5);
  ASSERT_EQ(s.kernels_size(), 2);
  EXPECT_EQ(s.kernels(0).name(), "matmul_kernel");
  EXPECT_EQ(s.kernels(0).origin(), v1::SUBMISSION);
  EXPECT_EQ(s.kernels(0).launches(), 5);
  EXPECT_NEAR(s.kernels(0).ms_per_call(), 0.99, 1e-9);
  EXPECT_EQ(s.kernels(0).image(), "0123456789abcdef");  // the JIT log's name for it
  EXPECT_EQ(s.kernels(1).origin(), v1::MEMORY);
  EXPECT_TRUE(s.gap().empty());
}

TEST(CensusTest, LibraryComputeIsAFallbackNamingItsKernels) {
  CensusTally t(Triton());
  t.Add(Call({Entry("3333333333333333a", "sm90_xmma_gemm_bf16bf16_bf16f32", 950000)}, 950000), 1.0,
        false);
  EXPECT_TRUE(t.fallback());
  EXPECT_TRUE(absl::StrContains(t.Finding(), "sm90_xmma_gemm_bf16bf16_bf16f32")) << t.Finding();
  EXPECT_TRUE(t.Summary(true).outputs_correct());
}

TEST(CensusTest, GpuTimeTheCensusDidNotSeeIsAFallback) {
  // A silenced tracer: the bracket measured 1 ms, the census saw 0.1 ms.
  CensusTally silenced(Cuda());
  for (int i = 0; i < 5; ++i) silenced.Add(Call({Entry(kOwn, "gemm", 100000)}, 100000), 1.0, false);
  EXPECT_TRUE(silenced.fallback());
  EXPECT_TRUE(absl::StrContains(silenced.Finding(), "did not see")) << silenced.Finding();
  EXPECT_NEAR(silenced.Summary(true).unaccounted_ms_per_call(), 0.9, 1e-9);
  // The same with the gate forced (run() synchronized): the bracket holds
  // host time, and says nothing of unseen work.
  CensusTally forced(Cuda());
  for (int i = 0; i < 5; ++i) forced.Add(Call({Entry(kOwn, "gemm", 100000)}, 100000), 1.0, true);
  EXPECT_FALSE(forced.fallback()) << forced.Finding();
  // Hand-over noise within the slack is no finding.
  CensusTally honest(Cuda());
  for (int i = 0; i < 5; ++i) honest.Add(Call({Entry(kOwn, "gemm", 990000)}, 990000), 1.0, false);
  EXPECT_FALSE(honest.fallback()) << honest.Finding();
}

TEST(CensusTest, AMissingOrMalformedCensusIsAFallback) {
  CensusTally t(Cuda());
  t.Add(Call({Entry(kOwn, "gemm", 990000)}, 990000), 1.0, false);
  t.Add("", 1.0, false);
  EXPECT_TRUE(t.fallback());
  EXPECT_TRUE(absl::StrContains(t.Finding(), "1 of 2 timed calls")) << t.Finding();
  // Names past the wire's bound cannot be shown either.
  CensusTally crowded(Cuda());
  CallCensus c;
  c.busy_ns = 990000;
  c.more = 3;
  c.entries.push_back(Entry(kOwn, "gemm", 990000));
  crowded.Add(EncodeCallCensus(c), 1.0, false);
  EXPECT_TRUE(crowded.fallback());
}

TEST(CensusTest, AHostWithoutATracerIsJudgedByNothingAndSaysSo) {
  EXPECT_EQ(CensusOffReason("census: on"), "");
  EXPECT_EQ(CensusOffReason("census: off: no CUPTI"), "no CUPTI");
  EXPECT_FALSE(CensusOffReason("").empty());
  CensusRules rules = Cuda();
  rules.off = "no CUPTI";
  CensusTally t(rules);
  t.Add("", 1.0, false);
  EXPECT_FALSE(t.fallback());
  EXPECT_EQ(t.Summary(true).gap(), "no census was taken: no CUPTI");
}

TEST(CensusTest, ANameFromImagesOfTwoOriginsIsTheLibrarys) {
  CensusTally t(Triton());
  t.Add(Call({Entry("0123456789abcdefb", "matmul_kernel", 500000)}, 500000), 0.5, false);
  t.Add(Call({Entry("4444444444444444a", "matmul_kernel", 500000)}, 500000), 0.5, false);
  EXPECT_TRUE(t.fallback());
  EXPECT_EQ(t.Summary(true).kernels(0).origin(), v1::LIBRARY);
  EXPECT_EQ(t.Summary(true).kernels(0).image(), "*");
}

// The names a real cubin's tracer reads, from nvcc where this machine has
// one; and nothing from bytes that are not a well-formed ELF.
TEST(CensusTest, ACubinsKernelsAreItsTextSections) {
  const std::string nvcc = "/usr/local/cuda/bin/nvcc";
  if (access(nvcc.c_str(), X_OK) != 0) GTEST_SKIP() << "no nvcc at " << nvcc;
  const std::string dir = ::testing::TempDir() + "/census_cubin_" + std::to_string(getpid());
  ASSERT_EQ(system(("mkdir -p " + dir).c_str()), 0);
  {
    std::ofstream(dir + "/k.cu") << "extern \"C\" __global__ void plain_kernel(float* x) { x[0] = 1; }\n"
                                 << "template <int N> __global__ void tiled(float* x) { x[N] = 2; }\n"
                                 << "template __global__ void tiled<4>(float*);\n";
  }
  ASSERT_EQ(system((nvcc + " -cubin -arch=sm_90a -o " + dir + "/k.cubin " + dir + "/k.cu").c_str()), 0);
  std::ifstream in(dir + "/k.cubin", std::ios::binary);
  const std::string image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> names = CubinKernels(image);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"_Z5tiledILi4EEvPf", "plain_kernel"}));
  // Cut anywhere, or its section table pointed past its end: nothing.
  EXPECT_TRUE(CubinKernels(image.substr(0, 40)).empty());
  std::string broken = image;
  broken[0x28] = '\xff';  // e_shoff's low byte
  broken[0x2f] = '\x7f';  // and its high byte: far past the end
  EXPECT_TRUE(CubinKernels(broken).empty());
  EXPECT_TRUE(CubinKernels("not an image").empty());
  system(("rm -rf " + dir).c_str());
}

}  // namespace
}  // namespace ptxbench::runner
