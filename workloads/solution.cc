#include "workloads/solution.h"

#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/json_reader.h"
#include "common/status_macros.h"

namespace ptxbench::workloads {
namespace {

using Json = StrictJson;

constexpr size_t kMaxSources = 64;
constexpr size_t kMaxTotalBytes = size_t{4} << 20;
constexpr size_t kMaxPathLength = 200;

// Names the build writes next to the sources; a source may not replace them.
constexpr const char* kReservedNames[] = {"trampoline.cpp", "kernel.so", "kernel.ptx",
                                          "result.json", "build.log"};

// Relative, no "." or ".." component, no empty component, safe characters.
bool IsSafePath(absl::string_view path) {
  if (path.empty() || path.size() > kMaxPathLength || path.front() == '/') return false;
  for (char c : path) {
    if (!absl::ascii_isalnum(c) && c != '_' && c != '-' && c != '.' && c != '/') return false;
  }
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part.empty() || part == "." || part == "..") return false;
  }
  return true;
}

bool IsIdentifier(absl::string_view name) {
  if (name.empty() || name.size() > 128 || absl::ascii_isdigit(name[0])) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  return true;
}

}  // namespace

bool IsCompiledSource(absl::string_view path) {
  for (const char* ext : {".cu", ".cpp", ".cc", ".cxx", ".c"}) {
    if (absl::EndsWith(path, ext)) return true;
  }
  return false;
}

bool LooksLikeSolution(absl::string_view text) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  return !j.is_discarded() && j.is_object() && j.contains("sources") && j.contains("spec");
}

absl::StatusOr<Solution> ParseSolution(absl::string_view json, absl::string_view origin) {
  PTXB_ASSIGN_OR_RETURN(Json doc, ParseStrictJson(json, origin));
  JsonReader r(origin);
  if (!doc.is_object()) return r.Error("", doc, "an object");
  Solution s;
  for (auto [key, out] : {std::pair<const char*, std::string*>{"name", &s.name},
                          {"definition", &s.definition},
                          {"author", &s.author}}) {
    PTXB_ASSIGN_OR_RETURN(const Json* v, r.Required(doc, "", key));
    PTXB_ASSIGN_OR_RETURN(*out, r.String(*v, key));
  }
  PTXB_ASSIGN_OR_RETURN(const Json* spec, r.Required(doc, "", "spec"));
  if (!spec->is_object()) return r.Error("spec", *spec, "an object");
  PTXB_ASSIGN_OR_RETURN(const Json* language, r.Required(*spec, "spec", "language"));
  PTXB_ASSIGN_OR_RETURN(s.language, r.String(*language, "spec.language"));
  PTXB_ASSIGN_OR_RETURN(const Json* hardware, r.Required(*spec, "spec", "target_hardware"));
  PTXB_ASSIGN_OR_RETURN(s.target_hardware, r.StringList(*hardware, "spec.target_hardware"));
  if (s.target_hardware.empty()) {
    return r.Error("spec.target_hardware", *hardware, "at least one target");
  }
  PTXB_ASSIGN_OR_RETURN(const Json* entry, r.Required(*spec, "spec", "entry_point"));
  PTXB_ASSIGN_OR_RETURN(std::string entry_point, r.String(*entry, "spec.entry_point"));
  std::vector<std::string> parts = absl::StrSplit(entry_point, "::");
  if (parts.size() != 2 || parts[0].empty() || parts[1].empty()) {
    return r.Error("spec.entry_point", *entry, "\"<file>::<function>\"");
  }
  s.entry_file = parts[0];
  s.entry_symbol = parts[1];
  if (auto it = spec->find("dependencies"); it != spec->end()) {
    PTXB_ASSIGN_OR_RETURN(s.dependencies, r.StringList(*it, "spec.dependencies"));
  }
  if (auto it = spec->find("destination_passing_style"); it != spec->end()) {
    if (!it->is_boolean()) return r.Error("spec.destination_passing_style", *it, "a boolean");
    s.destination_passing_style = it->get<bool>();
  }
  if (auto it = spec->find("binding"); it != spec->end() && !it->is_null()) {
    PTXB_ASSIGN_OR_RETURN(s.binding, r.String(*it, "spec.binding"));
    if (s.binding != "tvm-ffi" && s.binding != "torch") {
      return r.Error("spec.binding", *it, "\"tvm-ffi\", \"torch\" or null");
    }
  }

  PTXB_ASSIGN_OR_RETURN(const Json* sources, r.Required(doc, "", "sources"));
  if (!sources->is_array() || sources->empty()) {
    return r.Error("sources", *sources, "a non-empty list of {path, content}");
  }
  if (sources->size() > kMaxSources) {
    return r.ErrorFound("sources", absl::StrCat(sources->size(), " files"),
                        absl::StrCat("at most ", kMaxSources, " files"));
  }
  std::set<std::string> paths;
  size_t total = 0;
  for (size_t i = 0; i < sources->size(); ++i) {
    const Json& item = (*sources)[i];
    const std::string field = JsonIndex("sources", i);
    if (!item.is_object()) return r.Error(field, item, "an object {path, content}");
    SourceFile f;
    PTXB_ASSIGN_OR_RETURN(const Json* path, r.Required(item, field, "path"));
    PTXB_ASSIGN_OR_RETURN(f.path, r.String(*path, JsonField(field, "path")));
    if (!IsSafePath(f.path)) {
      return r.Error(JsonField(field, "path"), *path,
                     "a relative path of [A-Za-z0-9._-] parts without \".\" or \"..\"");
    }
    for (const char* reserved : kReservedNames) {
      if (f.path == reserved) {
        return r.Error(JsonField(field, "path"), *path, "a name the build does not use itself");
      }
    }
    if (!paths.insert(f.path).second) {
      return r.Error(JsonField(field, "path"), *path, "a path no other source has");
    }
    PTXB_ASSIGN_OR_RETURN(const Json* content, r.Required(item, field, "content"));
    PTXB_ASSIGN_OR_RETURN(f.content, r.String(*content, JsonField(field, "content")));
    total += f.content.size();
    if (total > kMaxTotalBytes) {
      return r.ErrorFound(JsonField(field, "content"), absl::StrCat(total, " bytes in all"),
                          absl::StrCat("sources of at most ", kMaxTotalBytes >> 20, " MiB in all"));
    }
    s.sources.push_back(std::move(f));
  }
  if (!paths.contains(s.entry_file)) {
    return r.Error("spec.entry_point", *entry,
                   absl::StrCat("a file among the sources (", absl::StrJoin(paths, ", "), ")"));
  }
  return s;
}

absl::Status CheckSolutionSupported(const Solution& s) {
  if (s.language == "triton") {
    // A well-formed one never gets here: it is evaluated as its module
    // (TritonModuleOf); this one is not well formed, and says why.
    const absl::Status module = TritonModuleOf(s).status();
    return absl::UnimplementedError(absl::StrCat(
        "solution ", s.name, ": spec.language \"triton\" is not supported as a CUDA solution",
        module.ok() ? ": a Triton solution is evaluated as its kernel.py"
                    : absl::StrCat(", and not as Triton either: ", module.message())));
  }
  if (s.language != "cuda" && s.language != "cpp") {
    return absl::UnimplementedError(absl::StrCat(
        "solution ", s.name, ": spec.language \"", s.language,
        "\" is not supported (ptxbench builds \"cuda\" and \"cpp\" solutions, and runs "
        "\"triton\" ones)"));
  }
  if (!s.binding.empty() && s.binding != "tvm-ffi") {
    return absl::UnimplementedError(absl::StrCat("solution ", s.name, ": spec.binding \"", s.binding,
                                                 "\" is not supported (only \"tvm-ffi\")"));
  }
  if (!s.destination_passing_style) {
    return absl::UnimplementedError(absl::StrCat(
        "solution ", s.name,
        ": spec.destination_passing_style false (outputs returned) is not supported; the outputs "
        "are preallocated and passed after the inputs"));
  }
  if (!IsIdentifier(s.entry_symbol)) {
    return absl::UnimplementedError(absl::StrCat("solution ", s.name, ": entry function \"",
                                                 s.entry_symbol, "\" is not a C identifier"));
  }
  for (const SourceFile& f : s.sources) {
    if (IsCompiledSource(f.path)) return absl::OkStatus();
  }
  return absl::UnimplementedError(
      absl::StrCat("solution ", s.name, ": no source to compile (.cu, .cpp, .cc, .cxx or .c)"));
}

absl::StatusOr<std::string> TritonModuleOf(const Solution& s) {
  auto refuse = [&s](absl::string_view what) {
    return absl::UnimplementedError(absl::StrCat("solution ", s.name, ": ", what));
  };
  if (s.language != "triton") {
    return refuse(absl::StrCat("spec.language \"", s.language, "\" is not \"triton\""));
  }
  // One module: the worker imports it as kernel.py and calls its run().
  if (s.sources.size() != 1) {
    return refuse(absl::StrCat(s.sources.size(), " sources; a Triton solution is one Python "
                               "module (kernel.py)"));
  }
  if (!absl::EndsWith(s.entry_file, ".py") || s.entry_symbol != "run") {
    return refuse(absl::StrCat("spec.entry_point \"", s.entry_file, "::", s.entry_symbol,
                               "\" is not \"<file>.py::run\" (PTXBench's kernel.py::run)"));
  }
  if (!s.destination_passing_style) {
    return refuse("spec.destination_passing_style false (outputs returned) is not supported; "
                  "the outputs are preallocated and passed after the inputs");
  }
  if (!s.binding.empty()) {
    return refuse(absl::StrCat("spec.binding \"", s.binding, "\" is not supported for Triton "
                               "(none: run() takes torch tensors)"));
  }
  return s.sources.front().content;
}

std::optional<std::string> TritonModuleOfJson(absl::string_view json) {
  absl::StatusOr<Solution> s = ParseSolution(json, "solution");
  if (!s.ok() || s->language != "triton") return std::nullopt;
  absl::StatusOr<std::string> module = TritonModuleOf(*s);
  if (!module.ok()) return std::nullopt;
  return *std::move(module);
}

}  // namespace ptxbench::workloads
