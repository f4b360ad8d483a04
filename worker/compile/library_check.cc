#include "worker/compile/library_check.h"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "worker/compile/gpu_image_scan.h"
#include "worker/compile/vendor_code_table.h"

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

bool IsIdentChar(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// `#  include <name>` / `"name"` lines: the name and the whole directive.
LibraryUse FindInclude(absl::string_view text) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    const absl::string_view directive = absl::StripLeadingAsciiWhitespace(line);
    absl::string_view rest = directive;
    if (!absl::ConsumePrefix(&rest, "#")) continue;
    rest = absl::StripLeadingAsciiWhitespace(rest);
    if (!absl::ConsumePrefix(&rest, "include")) continue;
    rest = absl::StripLeadingAsciiWhitespace(rest);
    if (rest.empty() || (rest[0] != '<' && rest[0] != '"')) continue;
    const size_t close = rest.find_first_of(">\"", 1);
    if (close == absl::string_view::npos || close == 1) continue;
    if (std::string library = LibraryOf(rest.substr(1, close - 1)); !library.empty()) {
      const size_t length = static_cast<size_t>(rest.data() - directive.data()) + close + 1;
      return {library, std::string(directive.substr(0, length))};
    }
  }
  return {};
}

// String literals naming a vendor library (for dlopen): "…libcublas…".
LibraryUse FindLibraryName(absl::string_view text) {
  size_t i = 0;
  while ((i = text.find('"', i)) != absl::string_view::npos) {
    size_t end = i + 1;
    while (end < text.size() && text[end] != '"' && text[end] != '\n') {
      end += text[end] == '\\' && end + 1 < text.size() ? 2 : 1;
    }
    const absl::string_view literal = text.substr(i + 1, std::min(end, text.size()) - i - 1);
    for (size_t at = literal.find("lib"); at != absl::string_view::npos;
         at = literal.find("lib", at + 1)) {
      if (at > 0 && IsIdentChar(literal[at - 1])) continue;
      if (std::string library = LibraryOf(literal.substr(at)); !library.empty() &&
                                                               library != "CUTLASS") {
        return {library, absl::StrCat("library name \"", literal, "\"")};
      }
    }
    i = end + 1;
  }
  return {};
}

// API identifiers: cublasXxx / cublasLtXxx / cudnnXxx (an upper-case letter
// after the prefix), CUBLAS_ / CUBLASLT_ / CUDNN_ constants, cutlass:: / cute::.
LibraryUse FindIdentifier(absl::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    if (!IsIdentChar(text[i]) || absl::ascii_isdigit(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && IsIdentChar(text[end])) ++end;
    const absl::string_view word = text.substr(i, end - i);
    i = end;
    for (absl::string_view prefix : {"cublasLt", "cudnn", "cublas"}) {
      if (absl::StartsWith(word, prefix) && word.size() > prefix.size() &&
          absl::ascii_isupper(static_cast<unsigned char>(word[prefix.size()]))) {
        return {LibraryOf(word), absl::StrCat("identifier ", word)};
      }
    }
    for (absl::string_view prefix : {"CUBLASLT_", "CUBLAS_", "CUDNN_"}) {
      if (absl::StartsWith(word, prefix) && word.size() > prefix.size()) {
        return {LibraryOf(word), absl::StrCat("identifier ", word)};
      }
    }
    if ((word == "cutlass" || word == "cute") && text.substr(end, 2) == "::") {
      return {"CUTLASS", absl::StrCat("identifier ", word, "::")};
    }
  }
  return {};
}

}  // namespace

LibraryUse DetectLibraryInSource(absl::string_view source) {
  const std::string text = StripComments(source);
  if (LibraryUse use = FindInclude(text); use.found()) return use;
  if (LibraryUse use = FindLibraryName(text); use.found()) return use;
  return FindIdentifier(text);
}

LibraryUse DetectLibraryInLinkLog(absl::string_view log) {
  for (absl::string_view quote : {"undefined reference to `", "undefined reference to '"}) {
    for (size_t at = log.find(quote); at != absl::string_view::npos;
         at = log.find(quote, at + 1)) {
      absl::string_view name = log.substr(at + quote.size());
      size_t end = 0;
      while (end < name.size() && IsIdentChar(name[end])) ++end;
      name = name.substr(0, end);
      if (absl::StartsWith(name, "cublas") || absl::StartsWith(name, "cudnn")) {
        return {LibraryOf(name), absl::StrCat("link error: undefined reference to ", name)};
      }
    }
  }
  return {};
}

absl::StatusOr<LibraryUse> DetectLibraryInElf(const std::string& path,
                                              const VendorCodeTable* vendor_code) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::ostringstream buf;
  buf << in.rdbuf();
  absl::StatusOr<LibraryUse> use = DetectLibraryInElfData(buf.str(), vendor_code);
  if (!use.ok()) {
    return absl::Status(use.status().code(), absl::StrCat(path, ": ", use.status().message()));
  }
  return use;
}

namespace {

// GPU kernels of the vendor libraries, by what their (mangled) names
// contain: cuBLAS(Lt)'s nvjet and xmma kernels, anything naming cublas or
// cudnn, and CUTLASS templates (namespace cutlass, mangled "7cutlass").
LibraryUse VendorKernel(absl::string_view name) {
  struct Mark {
    const char* text;
    const char* library;
  };
  static constexpr Mark kMarks[] = {{"nvjet", "cuBLASLt"},
                                    {"xmma", "cuBLAS"},
                                    {"cublas", "cuBLAS"},
                                    {"cudnn", "cuDNN"},
                                    {"7cutlass", "CUTLASS"}};
  for (const Mark& m : kMarks) {
    if (absl::StrContains(name, m.text)) {
      return {m.library, absl::StrCat("a GPU kernel named ", name.substr(0, 200))};
    }
  }
  return {};
}

// Judges each image gpu_image_scan.h finds. The module itself: what it
// needs (DT_NEEDED) and imports. Any image inside it: also what it is (a
// vendor SONAME), defines (vendor functions) and, for cubins and PTX, its
// kernels' names and code.
class LibraryFinder final : public ImageVisitor {
 public:
  explicit LibraryFinder(const VendorCodeTable* vendor_code) : vendor_code_(vendor_code) {}

  const LibraryUse& use() const { return use_; }

  absl::StatusOr<bool> OnElf(const ElfView& elf, const ImageSite& site) override {
    const bool embedded = !site.top;
    const absl::string_view where = embedded ? "an embedded library's " : "";
    auto found = [&](std::string library, std::string evidence) {
      use_ = {std::move(library), std::move(evidence)};
      if (embedded) absl::StrAppend(&use_.evidence, " (carried at ", site.where, ")");
      return true;
    };
    for (const Elf64_Shdr& s : elf.sections()) {
      if (s.sh_type != SHT_DYNAMIC) continue;
      const absl::string_view dynamic = elf.SectionBytes(s);
      PTXB_RETURN_IF_ERROR(elf.budget()->Charge(dynamic.size()));
      for (uint64_t off = 0; off + sizeof(Elf64_Dyn) <= dynamic.size(); off += sizeof(Elf64_Dyn)) {
        Elf64_Dyn d;
        std::memcpy(&d, dynamic.data() + off, sizeof(d));
        if (d.d_tag == DT_NULL) break;
        if (d.d_tag != DT_NEEDED && !(embedded && d.d_tag == DT_SONAME)) continue;
        PTXB_ASSIGN_OR_RETURN(absl::string_view name, elf.String(s.sh_link, d.d_un.d_val));
        if (std::string lib = LibraryOf(name); !lib.empty() && lib != "CUTLASS") {
          return found(lib, absl::StrCat(where, d.d_tag == DT_NEEDED ? "DT_NEEDED " : "SONAME ",
                                         name));
        }
      }
    }
    const bool cubin = elf.header().e_machine == EM_CUDA;
    for (const Elf64_Shdr& s : elf.sections()) {
      const bool gpu_symbols = cubin && s.sh_type == SHT_SYMTAB;
      if (s.sh_type != SHT_DYNSYM && !gpu_symbols) continue;
      const absl::string_view table = elf.SectionBytes(s);
      PTXB_RETURN_IF_ERROR(elf.budget()->Charge(table.size()));
      for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= table.size(); off += sizeof(Elf64_Sym)) {
        Elf64_Sym sym;
        std::memcpy(&sym, table.data() + off, sizeof(sym));
        PTXB_ASSIGN_OR_RETURN(absl::string_view name, elf.String(s.sh_link, sym.st_name));
        if (gpu_symbols) {
          if (LibraryUse use = VendorKernel(name); use.found()) {
            return found(use.library, use.evidence);
          }
          continue;
        }
        // The file's own imports; an embedded library's exports too.
        if (sym.st_shndx != SHN_UNDEF && !embedded) continue;
        if (absl::StartsWith(name, "cublas") || absl::StartsWith(name, "cudnn")) {
          return found(LibraryOf(name),
                       absl::StrCat(where, sym.st_shndx == SHN_UNDEF ? "undefined" : "defined",
                                    " symbol ", name));
        }
      }
    }
    if (vendor_code_ == nullptr || vendor_code_->size() == 0) return false;
    return ForEachKernelSection(elf, [&](absl::string_view name, absl::string_view code) {
      const absl::string_view library = vendor_code_->Find(KernelSectionHash(code));
      if (library.empty()) return false;
      return found(std::string(library),
                   absl::StrCat("the code of a ", library, " kernel, in section ",
                                name.substr(0, 200)));
    });
  }

  absl::StatusOr<bool> OnPtx(absl::string_view text, const ImageSite& site) override {
    for (absl::string_view name : PtxEntryNames(text)) {
      if (LibraryUse use = VendorKernel(name); use.found()) {
        use_ = {use.library, absl::StrCat(use.evidence, " in PTX (carried at ", site.where, ")")};
        return true;
      }
    }
    return false;
  }

 private:
  const VendorCodeTable* const vendor_code_;
  LibraryUse use_;
};

}  // namespace

absl::StatusOr<LibraryUse> DetectLibraryInElfData(absl::string_view data,
                                                  const VendorCodeTable* vendor_code) {
  LibraryFinder finder(vendor_code);
  PTXB_RETURN_IF_ERROR(ScanGpuImages(data, ScanLimits(), &finder));
  return finder.use();
}

}  // namespace ptxbench::worker
