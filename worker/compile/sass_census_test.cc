// The SASS census (sass_census.h) over cuobjdump -sass listings.
#include "worker/compile/sass_census.h"

#include <gtest/gtest.h>

namespace ptxbench::worker {
namespace {

constexpr char kListing[] = R"sass(
	code for sm_90a
		Function : _Z4gemmPK13__nv_bfloat16S1_PS_iii
	.headerflags	@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                       /* 0x00000a00ff017b82 */
        /*0010*/                   USETMAXREG.DEALLOC.CTAPOOL 0x28 ;            /* 0x000000000000a9c8 */
        /*0020*/              @!P0 UTMALDG.2D [UR8], [UR4] ;                    /* 0x00000008040075b4 */
        /*0030*/                   SYNCS.ARRIVE.TRANS64.RED.A1T0 RZ, [UR6], RZ ; /* 0x000000ffff0079a7 */
        /*0040*/                   WARPGROUP.ARRIVE ;                           /* 0x0000000000007948 */
        /*0050*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT ;
        /*0060*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR8], R24 ;
        // HGMMA in a comment is not an instruction
        /*0070*/                   EXIT ;
		..........
)sass";

TEST(SassCensusTest, CountsHopperFamiliesOfInstructionsOnly) {
  const ptxbench::v1::SassCensus c = CensusSass(kListing);
  EXPECT_EQ(c.instructions(), 8);
  EXPECT_EQ(c.instruction_counts().at("HGMMA"), 2);
  EXPECT_EQ(c.instruction_counts().at("UTMALDG"), 1) << "behind a guard predicate";
  EXPECT_EQ(c.instruction_counts().at("SYNCS"), 1);
  EXPECT_EQ(c.instruction_counts().at("USETMAXREG"), 1);
  EXPECT_EQ(c.instruction_counts().at("WARPGROUP"), 1);
  EXPECT_EQ(c.architecture_counts().at("hopper"), 6);
  EXPECT_FALSE(c.instruction_counts().contains("LDC"));
}

TEST(SassCensusTest, AnAmpereKernelHasNoHopperFamily) {
  const ptxbench::v1::SassCensus c = CensusSass(
      "        /*0000*/   HMMA.16816.F32.BF16 R4, R8, R12, R4 ;\n"
      "        /*0010*/   LDGSTS.E.BYPASS.128 [R3], desc[UR4][R6.64] ;\n"
      "        /*0020*/   LDSM.16.M88.4 R8, [R2] ;\n"
      "        /*0030*/   STL.64 [R1+0x8], R4 ;\n"
      "        /*0040*/   LDL.64 R4, [R1+0x8] ;\n");
  EXPECT_EQ(c.instructions(), 5);
  EXPECT_FALSE(c.architecture_counts().contains("hopper"));
  EXPECT_EQ(c.architecture_counts().at("ampere"), 3);
  // Spills and stack arrays: local memory.
  EXPECT_EQ(c.architecture_counts().at("local"), 2);
  EXPECT_EQ(c.instruction_counts().at("STL"), 1);
  EXPECT_EQ(CensusSass("not a listing").instructions(), 0);
}

}  // namespace
}  // namespace ptxbench::worker
