#include "worker/compile/library_check.h"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace ptxbench::worker {
namespace {

// The library a header, symbol or soname belongs to; empty if none.
std::string LibraryOf(absl::string_view name) {
  if (absl::StartsWithIgnoreCase(name, "libcublasLt") || absl::StartsWith(name, "cublasLt") ||
      absl::StartsWith(name, "CUBLASLT_")) {
    return "cuBLASLt";
  }
  if (absl::StartsWithIgnoreCase(name, "libcublas") || absl::StartsWith(name, "cublas") ||
      absl::StartsWith(name, "CUBLAS_")) {
    return "cuBLAS";
  }
  if (absl::StartsWithIgnoreCase(name, "libcudnn") || absl::StartsWith(name, "cudnn") ||
      absl::StartsWith(name, "CUDNN_")) {
    return "cuDNN";
  }
  if (absl::StartsWith(name, "cutlass") || absl::StartsWith(name, "cute")) return "CUTLASS";
  return "";
}

// C++ source without // and /* */ comments; string and character literals
// are kept (they can contain "//").
std::string StripComments(absl::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      while (i < s.size() && s[i] != '\n') ++i;
      out.push_back('\n');
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      size_t end = s.find("*/", i + 2);
      i = end == absl::string_view::npos ? s.size() : end + 1;
      out.push_back(' ');
    } else if (c == '"' || c == '\'') {
      out.push_back(c);
      for (++i; i < s.size() && s[i] != c && s[i] != '\n'; ++i) {
        if (s[i] == '\\' && i + 1 < s.size()) out.push_back(s[i++]);
        out.push_back(s[i]);
      }
      if (i < s.size()) out.push_back(s[i]);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

LibraryUse FirstMatch(const std::string& text, const std::regex& re, int group,
                      absl::string_view what) {
  for (std::sregex_iterator it(text.begin(), text.end(), re), end; it != end; ++it) {
    std::string library = LibraryOf((*it)[group].str());
    if (!library.empty()) return {library, absl::StrCat(what, (*it)[0].str())};
  }
  return {};
}

}  // namespace

LibraryUse DetectLibraryInSource(absl::string_view source) {
  const std::string text = StripComments(source);
  static const std::regex kInclude(R"re(#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"])re");
  static const std::regex kLibName(R"re("[^"\n]*\b(lib(cublasLt|cublas|cudnn)[^"\n]*)")re");
  static const std::regex kIdentifier(
      R"re((^|[^A-Za-z0-9_])((cublasLt|cudnn|cublas)[A-Z][A-Za-z0-9_]*|(CUBLASLT|CUBLAS|CUDNN)_[A-Z0-9_]+|(cutlass|cute)::))re");
  if (LibraryUse use = FirstMatch(text, kInclude, 1, ""); use.found()) return use;
  if (LibraryUse use = FirstMatch(text, kLibName, 1, "library name "); use.found()) return use;
  if (LibraryUse use = FirstMatch(text, kIdentifier, 2, "identifier"); use.found()) return use;
  return {};
}

LibraryUse DetectLibraryInLinkLog(absl::string_view log) {
  static const std::regex kUndefined(R"re(undefined reference to [`']((cublas|cudnn)\w*))re");
  return FirstMatch(std::string(log), kUndefined, 1, "link error: ");
}

absl::StatusOr<LibraryUse> DetectLibraryInElf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::ostringstream buf;
  buf << in.rdbuf();
  const std::string data = buf.str();
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a valid ELF64 file: ", why));
  };
  if (data.size() < sizeof(Elf64_Ehdr) || std::memcmp(data.data(), ELFMAG, SELFMAG) != 0 ||
      data[EI_CLASS] != ELFCLASS64) {
    return bad("bad header");
  }
  Elf64_Ehdr eh;
  std::memcpy(&eh, data.data(), sizeof(eh));
  if (eh.e_shentsize != sizeof(Elf64_Shdr) ||
      eh.e_shoff + uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr) > data.size()) {
    return bad("section headers out of range");
  }
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  std::memcpy(sections.data(), data.data() + eh.e_shoff, eh.e_shnum * sizeof(Elf64_Shdr));
  auto in_range = [&](const Elf64_Shdr& s) {
    return s.sh_type == SHT_NOBITS || s.sh_offset + s.sh_size <= data.size();
  };
  // A NUL-terminated string at `offset` of string table `link`, or "".
  auto str = [&](uint32_t link, uint64_t offset) -> absl::string_view {
    if (link >= sections.size() || !in_range(sections[link])) return "";
    const Elf64_Shdr& t = sections[link];
    if (offset >= t.sh_size) return "";
    absl::string_view table(data.data() + t.sh_offset, t.sh_size);
    table.remove_prefix(offset);
    return table.substr(0, table.find('\0'));
  };
  for (const Elf64_Shdr& s : sections) {
    if (s.sh_type != SHT_DYNAMIC || !in_range(s)) continue;
    for (uint64_t off = 0; off + sizeof(Elf64_Dyn) <= s.sh_size; off += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d;
      std::memcpy(&d, data.data() + s.sh_offset + off, sizeof(d));
      if (d.d_tag == DT_NULL) break;
      if (d.d_tag != DT_NEEDED) continue;
      absl::string_view needed = str(s.sh_link, d.d_un.d_val);
      if (std::string lib = LibraryOf(needed); !lib.empty() && lib != "CUTLASS") {
        return LibraryUse{lib, absl::StrCat("DT_NEEDED ", needed)};
      }
    }
  }
  for (const Elf64_Shdr& s : sections) {
    if (s.sh_type != SHT_DYNSYM || !in_range(s)) continue;
    for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= s.sh_size; off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      std::memcpy(&sym, data.data() + s.sh_offset + off, sizeof(sym));
      if (sym.st_shndx != SHN_UNDEF) continue;
      absl::string_view name = str(s.sh_link, sym.st_name);
      if (absl::StartsWith(name, "cublas") || absl::StartsWith(name, "cudnn")) {
        return LibraryUse{LibraryOf(name), absl::StrCat("undefined symbol ", name)};
      }
    }
  }
  return LibraryUse{};
}

}  // namespace ptxbench::worker
