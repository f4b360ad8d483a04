#include "worker/compile/ptx_census.h"

#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/hash.h"

namespace ptxbench::worker {
namespace {

// PTX without comments and string literals (only `.file` directives have
// strings, and a ';' inside one must not split a statement).
std::string StripCommentsAndStrings(absl::string_view ptx) {
  std::string out;
  out.reserve(ptx.size());
  for (size_t i = 0; i < ptx.size(); ++i) {
    char c = ptx[i];
    if (c == '/' && i + 1 < ptx.size() && ptx[i + 1] == '/') {
      while (i < ptx.size() && ptx[i] != '\n') ++i;
      out.push_back('\n');
    } else if (c == '/' && i + 1 < ptx.size() && ptx[i + 1] == '*') {
      size_t end = ptx.find("*/", i + 2);
      i = end == absl::string_view::npos ? ptx.size() : end + 1;
      out.push_back(' ');
    } else if (c == '"') {
      size_t end = ptx.find('"', i + 1);
      i = end == absl::string_view::npos ? ptx.size() : end;
      out.append("\"\"");
    } else {
      out.push_back(c);
    }
  }
  return out;
}

bool IsLabelChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%' ||
         c == '.';
}

// Removes leading `label:` parts of a statement.
absl::string_view StripLabels(absl::string_view s) {
  while (true) {
    s = absl::StripLeadingAsciiWhitespace(s);
    size_t i = 0;
    while (i < s.size() && IsLabelChar(s[i])) ++i;
    if (i == 0 || i >= s.size() || s[i] != ':' || (i + 1 < s.size() && s[i + 1] == ':')) {
      return s;
    }
    s.remove_prefix(i + 1);
  }
}

bool Matches(const PtxFamily& family, absl::string_view opcode) {
  absl::string_view name = family.name;
  if (name == "red.global.v4") {
    std::vector<absl::string_view> parts = absl::StrSplit(opcode, '.');
    bool global = false, v4 = false;
    for (absl::string_view p : parts) {
      global |= p == "global";
      v4 |= p == "v4";
    }
    return parts[0] == "red" && global && v4;
  }
  if (name.back() == '.') return absl::StartsWith(opcode, name);
  // A complete opcode prefix such as "elect.sync" or "cp.async.cg.shared.global".
  return opcode == name || absl::StartsWith(opcode, absl::StrCat(name, "."));
}

}  // namespace

const std::vector<PtxFamily>& PtxFamilies() {
  static const auto* kFamilies = new std::vector<PtxFamily>{
      {"cp.async.ca.shared.global", "ampere"},
      {"cp.async.cg.shared.global", "ampere"},
      {"ldmatrix.", "ampere"},
      {"mma.sync.", "ampere"},
      {"barrier.cluster.", "hopper"},
      {"cp.async.bulk.", "hopper"},
      {"elect.sync", "hopper"},
      {"mapa.", "hopper"},
      {"mbarrier.", "hopper"},
      {"setmaxnreg.", "hopper"},
      {"stmatrix.", "hopper"},
      {"wgmma.", "hopper"},
      {"red.global.v4", "blackwell"},
      {"tcgen05.", "blackwell"},
  };
  return *kFamilies;
}

std::vector<std::string> PtxOpcodes(absl::string_view ptx) {
  std::string text = StripCommentsAndStrings(ptx);
  std::vector<std::string> opcodes;
  for (absl::string_view stmt : absl::StrSplit(text, absl::ByAnyChar(";{}"))) {
    stmt = StripLabels(stmt);
    if (!stmt.empty() && stmt[0] == '@') {  // guard predicate: @p, @!p, @%p1
      size_t end = stmt.find_first_of(" \t\r\n");
      if (end == absl::string_view::npos) continue;
      stmt = absl::StripLeadingAsciiWhitespace(stmt.substr(end));
    }
    if (stmt.empty() || stmt[0] == '.') continue;  // directive
    size_t end = stmt.find_first_of(" \t\r\n");
    absl::string_view op = stmt.substr(0, end);
    if (!std::isalpha(static_cast<unsigned char>(op[0]))) continue;
    opcodes.emplace_back(op);
  }
  return opcodes;
}

ptxbench::v1::PtxCensus CensusPtx(absl::string_view ptx) {
  ptxbench::v1::PtxCensus census;
  census.set_sha256(Sha256Hex(ptx));
  census.set_size_bytes(static_cast<int64_t>(ptx.size()));
  for (absl::string_view line : absl::StrSplit(StripCommentsAndStrings(ptx), '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, ".target")) {
      line = absl::StripLeadingAsciiWhitespace(line);
      census.set_virtual_arch(
          std::string(absl::StripAsciiWhitespace(line.substr(0, line.find(',')))));
      break;
    }
  }
  for (const std::string& op : PtxOpcodes(ptx)) {
    for (const PtxFamily& family : PtxFamilies()) {
      if (!Matches(family, op)) continue;
      (*census.mutable_instruction_counts())[family.name] += 1;
      (*census.mutable_architecture_counts())[family.architecture] += 1;
      break;
    }
  }
  return census;
}

}  // namespace ptxbench::worker
