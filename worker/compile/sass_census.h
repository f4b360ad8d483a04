#ifndef PTXBENCH_WORKER_COMPILE_SASS_CENSUS_H_
#define PTXBENCH_WORKER_COMPILE_SASS_CENSUS_H_

// The census of a built kernel's SASS (docs/MEASUREMENT.md, "Building a
// submission"): the Hopper instruction families the GPU will run (warpgroup
// MMA, the tensor memory accelerator, bulk copies, transaction barriers,
// register reallocation), the warp-level tensor-core and asynchronous-copy
// families of sm_80 on ("ampere"), and local-memory loads and stores
// ("local": spills), counted from `cuobjdump -sass` output, which is what
// PTXBench's "tag H" checks. Pure text analysis; thread-safe.

#include <vector>

#include "absl/strings/string_view.h"
#include "ptxbench/v1/common.pb.h"

namespace ptxbench::worker {

struct SassFamily {
  const char* opcode;        // the opcode before its first '.', e.g. "HGMMA"
  const char* architecture;  // "hopper", "ampere" or "local"
};
const std::vector<SassFamily>& SassFamilies();

// Counts the instructions of `cuobjdump -sass` output (lines
// "/*0070*/  @!P0 HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], RZ ;") by opcode
// family; `instructions` counts every instruction line. The tool is left to
// the caller.
ptxbench::v1::SassCensus CensusSass(absl::string_view listing);

// Changes whenever SassFamilies() or the PTX census's families change: part
// of the compiler cache's key, so a cached build is never read back with a
// census of fewer families than the worker now counts.
inline constexpr char kCensusVersion[] = "census-2";

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_COMPILE_SASS_CENSUS_H_
