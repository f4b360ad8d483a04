#include "workloads/registry.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/data_dir.h"
#include "common/status_macros.h"
#include "workloads/json_util.h"

namespace ptxbench::workloads {
namespace {

namespace fs = std::filesystem;

absl::StatusOr<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path.string(), ": cannot be read"));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat(path.string(), ": read failed"));
  return text.str();
}

// The entries of `dir` of the given kind, sorted, so loading is deterministic.
std::vector<fs::path> ListSorted(const fs::path& dir, bool directories,
                                 const std::string& extension) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    if (directories ? entry.is_directory(ec)
                    : entry.is_regular_file(ec) &&
                          entry.path().extension().string() == extension) {
      out.push_back(entry.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

absl::Status Mismatch(absl::string_view origin, absl::string_view field,
                      absl::string_view value, absl::string_view problem) {
  return FieldError(origin, field, nlohmann::json(std::string(value)).dump(), problem);
}

// Reads <root>/workloads/<op_type>/<name>.jsonl into `d`. `uuid_owner` maps
// the uuids seen so far (across all definitions) to where they were seen.
absl::Status LoadWorkloads(const fs::path& path, Definition& d,
                           std::map<std::string, std::string>& uuid_owner) {
  if (!fs::is_regular_file(path)) {
    return absl::InvalidArgumentError(absl::StrCat("definition '", d.name,
                                                   "' has no workloads: ", path.string(),
                                                   " does not exist"));
  }
  PTXB_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == absl::string_view::npos) continue;
    const std::string origin = absl::StrCat(path.string(), ":", line_number);
    PTXB_ASSIGN_OR_RETURN(WorkloadRecord record, ParseWorkloadRecord(line, origin));
    if (record.definition != d.name) {
      return Mismatch(origin, "definition", record.definition,
                      absl::StrCat("must name this file's definition, \"", d.name, "\""));
    }
    PTXB_RETURN_IF_ERROR(ValidateWorkload(d, record.workload, origin));
    const std::string& uuid = record.workload.uuid;
    if (auto [it, inserted] = uuid_owner.emplace(uuid, origin); !inserted) {
      return Mismatch(origin, "workload.uuid", uuid,
                      absl::StrCat("duplicate uuid (first used at ", it->second, ")"));
    }
    d.workloads.push_back(std::move(record.workload));
  }
  if (d.workloads.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "definition '", d.name, "' has no workloads: ", path.string(), " is empty"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<DefinitionRegistry>> DefinitionRegistry::Load(
    const std::vector<std::string>& dataset_roots) {
  auto registry = std::unique_ptr<DefinitionRegistry>(new DefinitionRegistry());
  std::map<std::string, std::string> origin_of_name;  // name -> definition file
  std::map<std::string, std::string> origin_of_uuid;  // uuid -> file:line owner
  for (const std::string& root_name : dataset_roots) {
    const fs::path root(root_name);
    const fs::path definitions_dir = root / "definitions";
    const fs::path workloads_dir = root / "workloads";
    if (!fs::is_directory(definitions_dir)) {
      return absl::NotFoundError(
          absl::StrCat("dataset root '", root_name, "' has no definitions/ folder"));
    }
    for (const fs::path& op_dir : ListSorted(definitions_dir, true, "")) {
      const std::string op_type = op_dir.filename().string();
      for (const fs::path& file : ListSorted(op_dir, false, ".json")) {
        PTXB_ASSIGN_OR_RETURN(std::string text, ReadFile(file));
        PTXB_ASSIGN_OR_RETURN(Definition d, ParseDefinition(text, file.string()));
        if (d.name != file.stem().string()) {
          return Mismatch(
              file.string(), "name", d.name,
              absl::StrCat("must match the file name \"", file.stem().string(), "\""));
        }
        if (d.op_type != op_type) {
          return Mismatch(file.string(), "op_type", d.op_type,
                          absl::StrCat("must match the folder name \"", op_type, "\""));
        }
        if (auto it = origin_of_name.find(d.name); it != origin_of_name.end()) {
          return absl::InvalidArgumentError(
              absl::StrCat(file.string(), ": definition '", d.name,
                           "' is already defined by ", it->second));
        }
        PTXB_RETURN_IF_ERROR(LoadWorkloads(workloads_dir / op_type / (d.name + ".jsonl"),
                                           d, origin_of_uuid));
        origin_of_name.emplace(d.name, file.string());
        registry->definitions_.emplace(d.name, std::move(d));
      }
    }
    // A workloads file whose definition is missing is a mistake worth naming
    // (a renamed or deleted definition), not something to skip silently.
    for (const fs::path& op_dir : ListSorted(workloads_dir, true, "")) {
      for (const fs::path& file : ListSorted(op_dir, false, ".jsonl")) {
        const std::string expected =
            (definitions_dir / op_dir.filename() / (file.stem().string() + ".json"))
                .string();
        if (!fs::is_regular_file(expected)) {
          return absl::InvalidArgumentError(
              absl::StrCat(file.string(), ": workloads without a definition (expected ",
                           expected, ")"));
        }
      }
    }
  }
  return registry;
}

std::string DefinitionRegistry::BundledRoot() { return DataDir() + "/workloads/data"; }

absl::StatusOr<const Definition*> DefinitionRegistry::Find(absl::string_view name) const {
  auto it = definitions_.find(name);
  if (it == definitions_.end()) {
    std::vector<std::string> known;
    for (const auto& [known_name, d] : definitions_) known.push_back(known_name);
    return absl::NotFoundError(absl::StrCat(
        "unknown definition '", name, "' (known: ", absl::StrJoin(known, ", "), ")"));
  }
  return &it->second;
}

std::vector<const Definition*> DefinitionRegistry::List() const {
  std::vector<const Definition*> out;
  for (const auto& [name, d] : definitions_) out.push_back(&d);
  return out;
}

}  // namespace ptxbench::workloads
