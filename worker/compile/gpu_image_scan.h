#ifndef PTXBENCH_WORKER_COMPILE_GPU_IMAGE_SCAN_H_
#define PTXBENCH_WORKER_COMPILE_GPU_IMAGE_SCAN_H_

// Finds every GPU or host image a built module carries, however it is
// hidden in the module's bytes, so that library_check.h and
// vendor_code_table.h can judge each one. The bytes come from a model
// (docs/SECURITY.md, "What the built module may carry"): the scan is total
// and its work is bounded by a budget linear in the bytes it reads.
//
// What is read, in one pass over every byte space (the module itself, and
// each compressed fatbin entry once decompressed):
//  - an ELF hit: the bytes 7f 'E' 'L' 'F', then a class byte of 1 or 2 and
//    a data byte of 1 or 2, at any offset. It must be a sound little-endian
//    ELF64 (ElfView::Parse), or the scan refuses it.
//  - a fatbin hit: the bytes 50 ed 55 ba (0xba55ed50) then the version
//    u16 1, at any offset. Its header and every entry must parse; entries
//    are PTX (kind 1) or cubins (kind 2), plain, LZ4 (flag 0x2000) or zstd
//    (flag 0x8000) compressed. A compressed entry is decompressed to exactly
//    its declared size and scanned as a byte space of its own; PTX text is
//    given to the visitor. Anything else refuses the scan.
//  A hit that lies inside a compressed entry's own bytes is read all the
//  same; only there is one that does not parse taken for compressed data
//  (nvcc's LZ4 keeps a cubin's header as literal bytes).
// Refusals: kInvalidArgument "an embedded image ptxbench cannot read at
// byte N: why" (the module itself: "not a valid ELF64 file: why");
// kResourceExhausted when the work or the decompressed bytes pass their
// bound. Neither is ever a pass.
// Thread-compatible; a scan keeps no state between calls.

#include <cstdint>
#include <string>
#include <vector>

#include <elf.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxbench::worker {

struct ScanLimits {
  // Work units (bytes looked at: scanned, parsed, hashed) allowed per byte
  // of every byte space, plus a constant; past it the scan is refused.
  uint64_t work_per_byte = 8;
  uint64_t work_slack = uint64_t{1} << 20;
  // All decompressed entries of one scan together.
  uint64_t max_decompressed_bytes = uint64_t{256} << 20;
  // Compressed entries inside compressed entries, at most this deep.
  int max_depth = 3;
  // For the toolkit's own libraries only (vendor_code_table.h), never a
  // model's module: a hit that does not parse, or a fatbin entry of another
  // kind, is passed over (libcublasLt's host code writes ELF headers from
  // immediates).
  bool skip_unreadable = false;
};

// The work a scan may still do; every read of the model's bytes is charged.
class WorkBudget {
 public:
  explicit WorkBudget(uint64_t units) : left_(units) {}
  // kResourceExhausted once the units are spent.
  absl::Status Charge(uint64_t units);
  void Grant(uint64_t units) { left_ += units; }
  uint64_t spent() const { return spent_; }

 private:
  uint64_t left_;
  uint64_t spent_ = 0;
};

// One sound ELF64 image, read in place: its header and section headers
// checked against its bytes (every section inside them, string and symbol
// tables well formed), so the accessors below cannot leave the image.
class ElfView {
 public:
  // `bytes` runs from the header to the end of the byte space holding it.
  // kInvalidArgument saying what is unsound.
  static absl::StatusOr<ElfView> Parse(absl::string_view bytes, WorkBudget* budget);

  const Elf64_Ehdr& header() const { return header_; }
  const std::vector<Elf64_Shdr>& sections() const { return sections_; }
  // The section's bytes (empty for SHT_NOBITS); charges nothing.
  absl::string_view SectionBytes(const Elf64_Shdr& s) const;
  // The NUL-terminated string at `offset` of string table section `link`
  // ("" when out of range), at most 4096 bytes; charges what it reads.
  absl::StatusOr<absl::string_view> String(uint32_t link, uint64_t offset) const;
  absl::StatusOr<absl::string_view> SectionName(const Elf64_Shdr& s) const {
    return String(header_.e_shstrndx, s.sh_name);
  }
  WorkBudget* budget() const { return budget_; }

 private:
  absl::string_view bytes_;
  Elf64_Ehdr header_{};
  std::vector<Elf64_Shdr> sections_;
  WorkBudget* budget_ = nullptr;
};

// Where an image was found, for evidence: "byte 1234", or "byte 0 of the
// entry compressed at byte 1234".
struct ImageSite {
  std::string where;
  bool top = false;  // the module itself (its first byte)
};

class ImageVisitor {
 public:
  virtual ~ImageVisitor() = default;
  // Each returns true to end the scan (found what it looked for), or an
  // error to refuse. The scan has charged the PTX text's bytes; OnElf
  // charges what it reads through the view's budget().
  virtual absl::StatusOr<bool> OnElf(const ElfView& elf, const ImageSite& site) = 0;
  virtual absl::StatusOr<bool> OnPtx(absl::string_view text, const ImageSite& site) = 0;
};

struct ScanStats {
  uint64_t work = 0;               // units charged
  uint64_t decompressed_bytes = 0;
  int elf_images = 0;
  int fatbin_entries = 0;
};

// Scans `module` (its first byte must start a sound ELF64) and every image
// inside it, calling `visitor` for each. OK when the scan ended, by the
// visitor or at the end of the bytes; the refusals above otherwise.
absl::Status ScanGpuImages(absl::string_view module, const ScanLimits& limits,
                           ImageVisitor* visitor, ScanStats* stats = nullptr);

// The `.entry` (kernel) names of PTX text, in order; linear in the text.
std::vector<absl::string_view> PtxEntryNames(absl::string_view ptx);

// LZ4 block format (no frame): exactly `size` bytes out or kInvalidArgument.
// Exposed for its tests.
absl::StatusOr<std::string> DecompressLz4Block(absl::string_view in, uint64_t size);

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_COMPILE_GPU_IMAGE_SCAN_H_
