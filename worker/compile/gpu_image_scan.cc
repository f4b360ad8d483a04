#include "worker/compile/gpu_image_scan.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <queue>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ptxbench::worker {
namespace {

constexpr uint32_t kFatbinMagic = 0xba55ed50;
constexpr size_t kFatbinHeaderSize = 16;
// An entry's header: kind, version, header size, payload size, compressed
// size (u32 at 16), flags (u64 at 40), uncompressed size (u64 at 56). nvcc
// 13 writes headers of 64 to 128 bytes; the fields past 64 are not read.
constexpr size_t kEntryMinHeader = 64;
constexpr uint16_t kEntryPtx = 1;
constexpr uint16_t kEntryCubin = 2;
constexpr uint64_t kFlagLz4 = 0x2000;
constexpr uint64_t kFlagZstd = 0x8000;
constexpr size_t kMaxName = 4096;

template <typename T>
T Load(absl::string_view bytes, size_t at) {
  T v;
  std::memcpy(&v, bytes.data() + at, sizeof(T));
  return v;
}

absl::Status Unreadable(absl::string_view where, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("an embedded image ptxbench cannot read at ", where, ": ", why));
}

// An ELF hit: the magic, then a class and a data byte that an ELF file has
// (a bare "\x7fELF" is data). No more is asked of a hit: every byte asked
// is one a loader that does not check it would let a carried image vary.
bool IsElfHit(absl::string_view s, size_t at) {
  if (s.size() - at < EI_NIDENT || std::memcmp(s.data() + at, ELFMAG, SELFMAG) != 0) return false;
  const auto cls = static_cast<unsigned char>(s[at + EI_CLASS]);
  const auto data = static_cast<unsigned char>(s[at + EI_DATA]);
  return (cls == ELFCLASS32 || cls == ELFCLASS64) && (data == ELFDATA2LSB || data == ELFDATA2MSB);
}

bool IsFatbinHit(absl::string_view s, size_t at) {
  return s.size() - at >= kFatbinHeaderSize && Load<uint32_t>(s, at) == kFatbinMagic &&
         Load<uint16_t>(s, at + 4) == 1;
}

// One scan: its budget, decompression account and the visitor.
class Scanner {
 public:
  Scanner(const ScanLimits& limits, ImageVisitor* visitor, uint64_t module_bytes)
      : limits_(limits),
        visitor_(visitor),
        budget_(limits.work_slack + Scaled(module_bytes)) {}

  // Scans one byte space; true when the visitor ended the scan.
  absl::StatusOr<bool> ScanSpace(absl::string_view space, const std::string& suffix, int depth);

  ScanStats stats() {
    stats_.work = budget_.spent();
    return stats_;
  }

 private:
  uint64_t Scaled(uint64_t bytes) const {
    return bytes > std::numeric_limits<uint64_t>::max() / limits_.work_per_byte
               ? std::numeric_limits<uint64_t>::max()
               : bytes * limits_.work_per_byte;
  }
  // The hit at `at`; `compressed`: inside a compressed entry's bytes, where
  // one that does not parse is data.
  absl::StatusOr<bool> Elf(absl::string_view space, size_t at, const std::string& suffix,
                           int depth, bool compressed);
  absl::StatusOr<bool> Fatbin(absl::string_view space, size_t at, const std::string& suffix,
                              int depth);
  absl::StatusOr<std::string> Decompress(absl::string_view in, uint64_t flags, uint64_t size,
                                         const std::string& where);

  const ScanLimits limits_;
  ImageVisitor* const visitor_;
  WorkBudget budget_;
  ScanStats stats_;
  // Compressed entries' byte ranges [first, second) of the space being
  // scanned, by start, not yet reached.
  using Range = std::pair<size_t, size_t>;
  std::vector<std::priority_queue<Range, std::vector<Range>, std::greater<>>> pending_;
};

absl::StatusOr<bool> Scanner::ScanSpace(absl::string_view space, const std::string& suffix,
                                        int depth) {
  PTXB_RETURN_IF_ERROR(budget_.Charge(space.size()));
  pending_.emplace_back();
  size_t covered_until = 0;  // hits before it lie in a compressed entry
  auto scan = [&]() -> absl::StatusOr<bool> {
    size_t next_elf = space.find('\x7f');
    size_t next_fat = space.find('\x50');
    while (next_elf != absl::string_view::npos || next_fat != absl::string_view::npos) {
      const size_t at = std::min(next_elf, next_fat);
      auto& pending = pending_.back();
      while (!pending.empty() && pending.top().first <= at) {
        covered_until = std::max(covered_until, pending.top().second);
        pending.pop();
      }
      const bool compressed = at < covered_until;
      if (at == next_elf) {
        if (IsElfHit(space, at)) {
          PTXB_ASSIGN_OR_RETURN(bool done, Elf(space, at, suffix, depth, compressed));
          if (done) return true;
        }
        next_elf = space.find('\x7f', at + 1);
      } else {
        if (IsFatbinHit(space, at)) {
          absl::StatusOr<bool> done = Fatbin(space, at, suffix, depth);
          if (!done.ok() && !((compressed || limits_.skip_unreadable) &&
                              absl::IsInvalidArgument(done.status()))) {
            return done;
          }
          if (done.ok() && *done) return true;
        }
        next_fat = space.find('\x50', at + 1);
      }
    }
    return false;
  };
  absl::StatusOr<bool> result = scan();
  pending_.pop_back();
  return result;
}

absl::StatusOr<bool> Scanner::Elf(absl::string_view space, size_t at, const std::string& suffix,
                                  int depth, bool compressed) {
  const std::string where = absl::StrCat("byte ", at, suffix);
  absl::StatusOr<ElfView> elf = ElfView::Parse(space.substr(at), &budget_);
  if (!elf.ok()) {
    if (!absl::IsInvalidArgument(elf.status())) return elf.status();
    if (compressed || limits_.skip_unreadable) return false;
    if (depth == 0 && at == 0) return elf.status();
    return Unreadable(where, elf.status().message());
  }
  ++stats_.elf_images;
  return visitor_->OnElf(*elf, ImageSite{where, depth == 0 && at == 0});
}

absl::StatusOr<bool> Scanner::Fatbin(absl::string_view space, size_t at,
                                     const std::string& suffix, int depth) {
  const std::string where = absl::StrCat("byte ", at, suffix);
  PTXB_RETURN_IF_ERROR(budget_.Charge(kFatbinHeaderSize));
  const uint16_t header_size = Load<uint16_t>(space, at + 6);
  const uint64_t fat_size = Load<uint64_t>(space, at + 8);
  const size_t rest = space.size() - at;
  if (header_size != kFatbinHeaderSize || fat_size > rest - kFatbinHeaderSize) {
    return Unreadable(where, absl::StrCat("a fatbin header of size ", header_size, " holding ",
                                          fat_size, " bytes in ", rest));
  }
  const absl::string_view body = space.substr(at + kFatbinHeaderSize, fat_size);
  size_t pos = 0;
  while (pos < body.size()) {
    const size_t entry_at = at + kFatbinHeaderSize + pos;
    const std::string entry_where = absl::StrCat("byte ", entry_at, suffix);
    PTXB_RETURN_IF_ERROR(budget_.Charge(kEntryMinHeader));
    if (body.size() - pos < kEntryMinHeader) {
      return Unreadable(entry_where, "a truncated fatbin entry");
    }
    const absl::string_view entry = body.substr(pos);
    const uint16_t kind = Load<uint16_t>(entry, 0);
    const uint32_t entry_header = Load<uint32_t>(entry, 4);
    const uint64_t payload_size = Load<uint64_t>(entry, 8);
    const uint32_t compressed_size = Load<uint32_t>(entry, 16);
    const uint64_t flags = Load<uint64_t>(entry, 40);
    const uint64_t size = Load<uint64_t>(entry, 56);
    if (entry_header < kEntryMinHeader || entry_header > entry.size() ||
        payload_size > entry.size() - entry_header) {
      return Unreadable(entry_where, absl::StrCat("a fatbin entry of header ", entry_header,
                                                  " and payload ", payload_size, " bytes in ",
                                                  entry.size()));
    }
    if (kind != kEntryPtx && kind != kEntryCubin) {
      if (limits_.skip_unreadable) {
        pos += entry_header + payload_size;
        continue;
      }
      return Unreadable(entry_where, absl::StrCat("a fatbin entry of kind ", kind,
                                                  " (only PTX, 1, and cubins, 2, are read)"));
    }
    ++stats_.fatbin_entries;
    const absl::string_view payload = entry.substr(entry_header, payload_size);
    const size_t payload_at = entry_at + entry_header;
    const ImageSite site{entry_where, false};
    if ((flags & (kFlagLz4 | kFlagZstd)) == 0) {
      // In the same byte space: its images are hits of this scan.
      if (kind == kEntryCubin && !IsElfHit(payload, 0)) {
        return Unreadable(entry_where, "a fatbin cubin entry that is not an ELF image");
      }
      if (kind == kEntryPtx) {
        PTXB_RETURN_IF_ERROR(budget_.Charge(payload.size()));
        PTXB_ASSIGN_OR_RETURN(bool done, visitor_->OnPtx(payload, site));
        if (done) return true;
      }
    } else {
      if (compressed_size > payload_size) {
        return Unreadable(entry_where, absl::StrCat("a compressed size of ", compressed_size,
                                                    " in a payload of ", payload_size));
      }
      if (depth >= limits_.max_depth) {
        return Unreadable(entry_where, absl::StrCat("compressed entries nested deeper than ",
                                                    limits_.max_depth));
      }
      pending_.back().push({payload_at, payload_at + payload_size});
      PTXB_ASSIGN_OR_RETURN(std::string out,
                            Decompress(payload.substr(0, compressed_size), flags, size,
                                       entry_where));
      const std::string inner =
          absl::StrCat(" of the entry compressed at byte ", entry_at, suffix);
      if (kind == kEntryCubin && !IsElfHit(out, 0)) {
        return Unreadable(entry_where, "a compressed fatbin cubin entry that is not an ELF image");
      }
      if (kind == kEntryPtx) {
        PTXB_RETURN_IF_ERROR(budget_.Charge(out.size()));
        PTXB_ASSIGN_OR_RETURN(bool done, visitor_->OnPtx(out, site));
        if (done) return true;
      }
      PTXB_ASSIGN_OR_RETURN(bool done, ScanSpace(out, inner, depth + 1));
      if (done) return true;
    }
    pos += entry_header + payload_size;
  }
  return false;
}

absl::StatusOr<std::string> Scanner::Decompress(absl::string_view in, uint64_t flags,
                                                uint64_t size, const std::string& where) {
  if ((flags & kFlagLz4) && (flags & kFlagZstd)) {
    return Unreadable(where, "a fatbin entry flagged both LZ4 and zstd");
  }
  if (size > limits_.max_decompressed_bytes - stats_.decompressed_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the module's compressed GPU code at ", where, " would decompress past ptxbench's bound of ",
        limits_.max_decompressed_bytes >> 20, " MiB (", size, " bytes more)"));
  }
  stats_.decompressed_bytes += size;
  PTXB_RETURN_IF_ERROR(budget_.Charge(in.size()));
  budget_.Grant(Scaled(size));
  if (flags & kFlagLz4) {
    absl::StatusOr<std::string> out = DecompressLz4Block(in, size);
    if (!out.ok()) return Unreadable(where, out.status().message());
    return out;
  }
  std::string out(size, '\0');
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> ctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
  if (ctx == nullptr) return absl::ResourceExhaustedError("cannot make a zstd context");
  const size_t n = ZSTD_decompressDCtx(ctx.get(), out.data(), out.size(), in.data(), in.size());
  if (ZSTD_isError(n) || n != size) {
    return Unreadable(where, absl::StrCat("zstd data that does not decompress to the ", size,
                                          " bytes declared (",
                                          ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short", ")"));
  }
  return out;
}

}  // namespace

absl::Status WorkBudget::Charge(uint64_t units) {
  spent_ += units;
  if (units > left_) {
    left_ = 0;
    return absl::ResourceExhaustedError(absl::StrCat(
        "the module's embedded images take more reading than ptxbench allows for its size (",
        spent_, " units of work)"));
  }
  left_ -= units;
  return absl::OkStatus();
}

absl::StatusOr<ElfView> ElfView::Parse(absl::string_view bytes, WorkBudget* budget) {
  auto bad = [](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("not a valid ELF64 file: ", why));
  };
  PTXB_RETURN_IF_ERROR(budget->Charge(sizeof(Elf64_Ehdr)));
  if (bytes.size() < sizeof(Elf64_Ehdr) || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0 ||
      bytes[EI_CLASS] != ELFCLASS64 || bytes[EI_DATA] != ELFDATA2LSB ||
      bytes[EI_VERSION] != EV_CURRENT) {
    return bad("bad header");
  }
  ElfView v;
  v.bytes_ = bytes;
  v.budget_ = budget;
  std::memcpy(&v.header_, bytes.data(), sizeof(v.header_));
  const Elf64_Ehdr& eh = v.header_;
  // Every offset and size comes from the file: compared by subtraction, so
  // no sum can wrap around.
  if (eh.e_ehsize != sizeof(Elf64_Ehdr)) return bad("bad header size");
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shoff > bytes.size() ||
      uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr) > bytes.size() - eh.e_shoff) {
    return bad("section headers out of range");
  }
  if (eh.e_shstrndx >= eh.e_shnum) return bad("no section name table");
  if (eh.e_phnum > 0 &&
      (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > bytes.size() ||
       uint64_t{eh.e_phnum} * sizeof(Elf64_Phdr) > bytes.size() - eh.e_phoff)) {
    return bad("program headers out of range");
  }
  PTXB_RETURN_IF_ERROR(budget->Charge(uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr)));
  v.sections_.resize(eh.e_shnum);
  std::memcpy(v.sections_.data(), bytes.data() + eh.e_shoff, eh.e_shnum * sizeof(Elf64_Shdr));
  for (size_t i = 0; i < v.sections_.size(); ++i) {
    const Elf64_Shdr& s = v.sections_[i];
    if (s.sh_type != SHT_NOBITS && s.sh_type != SHT_NULL &&
        (s.sh_offset > bytes.size() || s.sh_size > bytes.size() - s.sh_offset)) {
      return bad(absl::StrCat("section ", i, " out of range"));
    }
    const bool symbols = s.sh_type == SHT_SYMTAB || s.sh_type == SHT_DYNSYM;
    if (symbols && (s.sh_entsize != sizeof(Elf64_Sym) || s.sh_size % sizeof(Elf64_Sym) != 0)) {
      return bad(absl::StrCat("symbol table ", i, " of entries of ", s.sh_entsize, " bytes"));
    }
    if (symbols || s.sh_type == SHT_DYNAMIC) {
      if (s.sh_link >= v.sections_.size() || v.sections_[s.sh_link].sh_type != SHT_STRTAB) {
        return bad(absl::StrCat("section ", i, " names no string table"));
      }
    }
  }
  if (v.sections_[eh.e_shstrndx].sh_type != SHT_STRTAB) return bad("no section name table");
  return v;
}

absl::string_view ElfView::SectionBytes(const Elf64_Shdr& s) const {
  if (s.sh_type == SHT_NOBITS || s.sh_type == SHT_NULL) return {};
  return bytes_.substr(s.sh_offset, s.sh_size);
}

absl::StatusOr<absl::string_view> ElfView::String(uint32_t link, uint64_t offset) const {
  if (link >= sections_.size()) return absl::string_view();
  const absl::string_view table = SectionBytes(sections_[link]);
  if (offset >= table.size()) return absl::string_view();
  // Names past this length are no kernel's or library's: bounding the read
  // keeps a crafted table from costing its size once per entry.
  const absl::string_view rest = table.substr(offset, kMaxName);
  const size_t end = rest.find('\0');
  PTXB_RETURN_IF_ERROR(budget_->Charge(end == absl::string_view::npos ? rest.size() : end + 1));
  return rest.substr(0, end);
}

absl::Status ScanGpuImages(absl::string_view module, const ScanLimits& limits,
                           ImageVisitor* visitor, ScanStats* stats) {
  Scanner scanner(limits, visitor, module.size());
  if (!IsElfHit(module, 0)) {
    return absl::InvalidArgumentError("not a valid ELF64 file: bad header");
  }
  absl::StatusOr<bool> done = scanner.ScanSpace(module, "", 0);
  if (stats != nullptr) *stats = scanner.stats();
  return done.status();
}

std::vector<absl::string_view> PtxEntryNames(absl::string_view ptx) {
  std::vector<absl::string_view> names;
  constexpr absl::string_view kEntry = ".entry";
  for (size_t at = ptx.find(kEntry); at != absl::string_view::npos;
       at = ptx.find(kEntry, at + kEntry.size())) {
    size_t i = at + kEntry.size();
    if (i >= ptx.size() || !absl::ascii_isspace(static_cast<unsigned char>(ptx[i]))) continue;
    while (i < ptx.size() && absl::ascii_isspace(static_cast<unsigned char>(ptx[i]))) ++i;
    size_t end = i;
    while (end < ptx.size() && end - i < kMaxName &&
           (absl::ascii_isalnum(static_cast<unsigned char>(ptx[end])) || ptx[end] == '_' ||
            ptx[end] == '$' || ptx[end] == '.')) {
      ++end;
    }
    if (end > i) names.push_back(ptx.substr(i, end - i));
  }
  return names;
}

absl::StatusOr<std::string> DecompressLz4Block(absl::string_view in, uint64_t size) {
  auto bad = [](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("LZ4 data that ", why));
  };
  std::string out;
  out.reserve(size);
  size_t i = 0;
  // A length: 4 bits of the token, then bytes while they read 255.
  auto length = [&](size_t nibble) -> absl::StatusOr<uint64_t> {
    uint64_t n = nibble;
    if (nibble != 15) return n;
    for (;;) {
      if (i >= in.size()) return bad("ends inside a length");
      const auto b = static_cast<unsigned char>(in[i++]);
      n += b;
      if (n > size) return bad("runs past its declared size");
      if (b != 255) return n;
    }
  };
  while (i < in.size()) {
    const auto token = static_cast<unsigned char>(in[i++]);
    PTXB_ASSIGN_OR_RETURN(uint64_t literals, length(token >> 4));
    if (literals > in.size() - i || literals > size - out.size()) {
      return bad("copies literals past its end");
    }
    out.append(in.data() + i, literals);
    i += literals;
    if (i == in.size()) break;  // the last sequence has no match
    if (in.size() - i < 2) return bad("ends inside an offset");
    const size_t offset = static_cast<unsigned char>(in[i]) |
                          (static_cast<size_t>(static_cast<unsigned char>(in[i + 1])) << 8);
    i += 2;
    PTXB_ASSIGN_OR_RETURN(uint64_t match, length(token & 15));
    match += 4;
    if (offset == 0 || offset > out.size()) return bad("refers before its start");
    if (match > size - out.size()) return bad("runs past its declared size");
    // Byte by byte: a match may overlap what it writes.
    for (uint64_t k = 0; k < match; ++k) out.push_back(out[out.size() - offset]);
  }
  if (out.size() != size) {
    return bad(absl::StrCat("gives ", out.size(), " bytes, not the ", size, " declared"));
  }
  return out;
}

}  // namespace ptxbench::worker
