#include "worker/compile/ptx_census.h"

#include "common/hash.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxbench::worker {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

constexpr char kPtx[] = R"(//
// wgmma.mma_async in a header comment is not an instruction
.version 8.0
.target sm_90a, debug
.address_size 64
.file 1 "/tmp/a;wgmma.x/kernel.cu"

.visible .entry mbarrier_kernel(   // the name contains a family
  .param .u64 p0
)
{
  .reg .pred %p<3>;
  .reg .b64 %rd<4>;
  /* ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1}, [%rd1]; */
$L__BB0_1:
  mbarrier.init.shared.b64 [%rd1], 1;
  @%p1 mbarrier.arrive.shared.b64 %rd2, [%rd1];
  @!%p2 bra $L__BB0_1;
  LOOP: wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%f1}, %rd1, %rd2, 1, 1, 1, 0, 0;
  { .reg .pred P1; elect.sync %r1|P1, -1; }
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%rd1], [%rd2], 16, [%rd3];
  cp.async.cg.shared.global [%rd1], [%rd2], 16;
  cp.async.ca.shared.global.L2::128B [%rd1], [%rd2], 4;
  mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1}, {%r1}, {%r2}, {%f2};
  red.relaxed.gpu.global.add.v4.f32 [%rd1], {%f1, %f2, %f3, %f4};
  red.global.add.f32 [%rd1], %f1;
  ret;
}
)";

TEST(PtxCensusTest, CountsInstructionsOnly) {
  ptxbench::v1::PtxCensus c = CensusPtx(kPtx);
  EXPECT_THAT(c.instruction_counts(),
              UnorderedElementsAre(Pair("mbarrier.", 2), Pair("wgmma.", 2), Pair("elect.sync", 1),
                                   Pair("cp.async.bulk.", 1), Pair("cp.async.cg.shared.global", 1),
                                   Pair("cp.async.ca.shared.global", 1), Pair("mma.sync.", 1),
                                   Pair("red.global.v4", 1)));
  EXPECT_THAT(c.architecture_counts(),
              UnorderedElementsAre(Pair("hopper", 6), Pair("ampere", 3), Pair("blackwell", 1)));
  EXPECT_EQ(c.virtual_arch(), "sm_90a");
  EXPECT_EQ(c.size_bytes(), static_cast<int64_t>(sizeof(kPtx) - 1));
  EXPECT_EQ(c.sha256(), Sha256Hex(kPtx));
}

TEST(PtxCensusTest, OpcodesSkipLabelsPredicatesAndDirectives) {
  EXPECT_THAT(PtxOpcodes(".reg .b32 %r<2>;\nL1: @!p add.s32 %r1, %r1, 1;\n@p bra L1;\nret;"),
              ElementsAre("add.s32", "bra", "ret"));
}

TEST(PtxCensusTest, CommentedAndNamedFamiliesAreNotCounted) {
  ptxbench::v1::PtxCensus c = CensusPtx(
      ".target sm_80\n"
      "// wgmma.fence.sync.aligned;\n"
      "/* tcgen05.alloc ...; */\n"
      ".visible .entry ldmatrix_kernel() { mov.u32 %r1, wgmma_count; ret; }\n");
  EXPECT_THAT(c.instruction_counts(), IsEmpty());
  EXPECT_THAT(c.architecture_counts(), IsEmpty());
  EXPECT_EQ(c.virtual_arch(), "sm_80");
}

TEST(PtxCensusTest, FamilyNeedsWholeOpcodeComponent) {
  // "mapa." must not match "mapax", nor "elect.sync" match "elect.synchronous".
  ptxbench::v1::PtxCensus c = CensusPtx(
      "mapa.shared::cluster.u32 %r1, %r2, 1;\nmapax %r1;\nelect.synchronous %r1;\n"
      "tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 [%rd1];\n");
  EXPECT_THAT(c.instruction_counts(), UnorderedElementsAre(Pair("mapa.", 1), Pair("tcgen05.", 1)));
}

}  // namespace
}  // namespace ptxbench::worker
