// The SASS census (sass_census.h).

#include "worker/compile/sass_census.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"

namespace ptxbench::worker {

const std::vector<SassFamily>& SassFamilies() {
  static const std::vector<SassFamily> families = {
      {"HGMMA", "hopper"},    {"IGMMA", "hopper"},    {"QGMMA", "hopper"},
      {"BGMMA", "hopper"},    {"WARPGROUP", "hopper"}, {"UTMALDG", "hopper"},
      {"UTMASTG", "hopper"},  {"UTMAPF", "hopper"},   {"UTMAREDG", "hopper"},
      {"UTMACCTL", "hopper"}, {"UBLKCP", "hopper"},   {"UBLKRED", "hopper"},
      {"UBLKPF", "hopper"},   {"SYNCS", "hopper"},    {"USETMAXREG", "hopper"},
      {"STSM", "hopper"},
      // Tensor-core MMA of the warp (mma.sync), asynchronous copies
      // (cp.async) and matrix loads (ldmatrix): sm_80 and later.
      {"HMMA", "ampere"},     {"IMMA", "ampere"},     {"DMMA", "ampere"},
      {"LDGSTS", "ampere"},   {"LDSM", "ampere"},
      // Local memory: register spills and stack arrays, slow.
      {"LDL", "local"},       {"STL", "local"},
  };
  return families;
}

ptxbench::v1::SassCensus CensusSass(absl::string_view listing) {
  ptxbench::v1::SassCensus census;
  for (absl::string_view line : absl::StrSplit(listing, '\n')) {
    // An instruction line starts with its address comment: /*0070*/.
    line = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, "/*")) continue;
    const size_t end = line.find("*/");
    if (end == absl::string_view::npos || end == 0) continue;
    const absl::string_view address = line.substr(0, end);
    if (!std::all_of(address.begin(), address.end(), absl::ascii_isxdigit)) continue;
    line = absl::StripLeadingAsciiWhitespace(line.substr(end + 2));
    if (line.empty()) continue;
    if (line[0] == '@') {  // a guard predicate: @P0, @!UP1
      const size_t space = line.find(' ');
      if (space == absl::string_view::npos) continue;
      line = absl::StripLeadingAsciiWhitespace(line.substr(space));
    }
    const absl::string_view opcode = line.substr(0, line.find_first_of(". ;"));
    if (opcode.empty() || !absl::ascii_isupper(opcode[0])) continue;
    census.set_instructions(census.instructions() + 1);
    for (const SassFamily& f : SassFamilies()) {
      if (opcode == f.opcode) {
        ++(*census.mutable_instruction_counts())[f.opcode];
        ++(*census.mutable_architecture_counts())[f.architecture];
      }
    }
  }
  return census;
}

}  // namespace ptxbench::worker
