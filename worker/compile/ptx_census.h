#ifndef PTXBENCH_WORKER_COMPILE_PTX_CENSUS_H_
#define PTXBENCH_WORKER_COMPILE_PTX_CENSUS_H_

// The census of PTX instruction families of a module (docs/MEASUREMENT.md,
// "Building a submission"): how much of the architecture's tensor-core /
// bulk-copy machinery a kernel uses. Pure text analysis; thread-safe.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "ptxbench/v1/common.pb.h"

namespace ptxbench::worker {

struct PtxFamily {
  const char* name;          // e.g. "wgmma."
  const char* architecture;  // "ampere", "hopper" or "blackwell"
};

// The families counted, in the order of the eval envelope's census
// (docs/FORMATS.md).
const std::vector<PtxFamily>& PtxFamilies();

// Counts instructions whose opcode belongs to a family. Only instructions are
// counted: comments, directives, labels and names that merely contain a
// family's text are not. An instruction may carry a label and a guard
// predicate (`@p`, `@!p`). `red.global.v4` matches any `red` whose modifiers
// include `.global` and `.v4` (e.g. red.relaxed.gpu.global.add.v4.f32).
// instruction_counts and architecture_counts hold non-zero entries only.
ptxbench::v1::PtxCensus CensusPtx(absl::string_view ptx);

// The opcodes of a PTX module's instructions, in order (exposed for tests).
std::vector<std::string> PtxOpcodes(absl::string_view ptx);

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_COMPILE_PTX_CENSUS_H_
