#include "workloads/registry.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/data_dir.h"
#include "common/file.h"
#include "common/hash.h"
#include "common/json_reader.h"
#include "common/status_macros.h"

namespace ptxbench::workloads {
namespace {

namespace fs = std::filesystem;

constexpr char kBundled[] = "bundled";

// Regular files under `dir` (any depth) ending in `extension`, sorted by
// path, so loading is deterministic.
std::vector<fs::path> FilesUnder(const fs::path& dir, const std::string& extension) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().extension() == extension) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Skipped(absl::string_view origin, absl::string_view why) {
  return absl::StrCat(origin, ": ", why, " (skipped)");
}

// What one dataset root yields.
struct RootLoad {
  std::vector<Definition> definitions;  // in file order
  std::map<std::string, std::string> file_of;  // definition name -> its file
  std::vector<std::string> problems;
};

// A workload line, parsed and checked, and its text (for the version).
struct LoadedLine {
  std::string definition;
  Workload workload;
  std::string text;
};

// Every line of one workloads file, or the problem that skips the file: a
// partly loaded file would run a definition on a subset of its workloads.
absl::StatusOr<std::vector<LoadedLine>> ReadWorkloadsFile(
    const fs::path& root, const fs::path& file, const std::map<std::string, Definition*>& by_name,
    std::set<std::string>& unknown) {
  PTXB_ASSIGN_OR_RETURN(std::string text, ReadFile(file.string()));
  std::vector<LoadedLine> lines;
  std::set<std::pair<std::string, std::string>> seen;  // (definition, id) in this file
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == absl::string_view::npos) continue;
    const std::string origin = absl::StrCat(file.string(), ":", number);
    PTXB_ASSIGN_OR_RETURN(WorkloadRecord record, ParseWorkloadRecord(line, origin));
    auto it = by_name.find(record.definition);
    if (it == by_name.end()) {
      unknown.insert(record.definition);  // FlashInfer-Bench ignores these too; listed
      continue;
    }
    const Definition& d = *it->second;
    PTXB_RETURN_IF_ERROR(ValidateWorkload(d, record.workload, origin));
    Workload& w = record.workload;
    if (!seen.emplace(d.name, w.uuid).second) {
      return JsonReader(origin).Error("workload.uuid", StrictJson(w.uuid),
                                      "an id no other workload of the definition has");
    }
    for (auto& [input, source] : w.inputs) {
      if (source.type != "safetensors") continue;
      const fs::path p(source.path);
      source.resolved_path = (p.is_absolute() ? p : root / p).lexically_normal().string();
    }
    lines.push_back({d.name, std::move(w), std::string(line)});
  }
  return lines;
}

RootLoad LoadRoot(const fs::path& root, const std::string& dataset) {
  RootLoad out;
  for (const fs::path& file : FilesUnder(root / "definitions", ".json")) {
    absl::StatusOr<std::string> text = ReadFile(file.string());
    absl::StatusOr<Definition> d =
        text.ok() ? ParseDefinition(*text, file.string()) : absl::StatusOr<Definition>(text.status());
    if (!d.ok()) {
      out.problems.push_back(absl::StrCat(d.status().message(), " (skipped)"));
      continue;
    }
    if (auto it = out.file_of.find(d->name); it != out.file_of.end()) {
      out.problems.push_back(Skipped(
          file.string(), absl::StrCat("definition '", d->name, "' is already defined by ", it->second)));
      continue;
    }
    d->dataset = dataset;
    out.file_of.emplace(d->name, file.string());
    out.definitions.push_back(*std::move(d));
  }
  std::map<std::string, Definition*> by_name;
  for (Definition& d : out.definitions) by_name[d.name] = &d;

  std::map<std::string, std::vector<std::string>> lines_of;  // definition -> line texts
  std::map<std::string, std::string> first_use;              // definition/id -> origin
  for (const fs::path& file : FilesUnder(root / "workloads", ".jsonl")) {
    std::set<std::string> unknown;
    absl::StatusOr<std::vector<LoadedLine>> lines = ReadWorkloadsFile(root, file, by_name, unknown);
    if (!lines.ok()) {
      out.problems.push_back(absl::StrCat(lines.status().message(), " (the whole file is skipped)"));
      continue;
    }
    // Ids repeated across files of one definition skip the later file too.
    std::string clash;
    for (const LoadedLine& l : *lines) {
      auto it = first_use.find(absl::StrCat(l.definition, "/", l.workload.uuid));
      if (it != first_use.end() && clash.empty()) {
        clash = absl::StrCat("workload id ", l.workload.uuid, " of '", l.definition,
                             "' is already used in ", it->second);
      }
    }
    if (!clash.empty()) {
      out.problems.push_back(Skipped(file.string(), clash));
      continue;
    }
    for (LoadedLine& l : *lines) {
      first_use.emplace(absl::StrCat(l.definition, "/", l.workload.uuid), file.string());
      lines_of[l.definition].push_back(std::move(l.text));
      by_name[l.definition]->workloads.push_back(std::move(l.workload));
    }
    for (const std::string& name : unknown) {
      out.problems.push_back(Skipped(
          file.string(), absl::StrCat("workloads of '", name, "', which this dataset does not define")));
    }
  }
  for (Definition& d : out.definitions) {
    d.version = Sha256Hex(absl::StrCat(d.json, "\n", absl::StrJoin(lines_of[d.name], "\n")));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<DefinitionRegistry>> DefinitionRegistry::Load(
    const DatasetOptions& options) {
  auto registry = std::unique_ptr<DefinitionRegistry>(new DefinitionRegistry());
  RootLoad bundled = LoadRoot(BundledRoot(), kBundled);
  if (!bundled.problems.empty() || bundled.definitions.empty()) {
    return absl::InternalError(absl::StrCat("the bundled definitions under ", BundledRoot(),
                                            " are broken: ", absl::StrJoin(bundled.problems, "; ")));
  }
  std::map<std::string, std::string> origin;  // name -> file that defined it
  for (Definition& d : bundled.definitions) {
    origin[d.name] = bundled.file_of[d.name];
    registry->definitions_.emplace(d.name, std::move(d));
  }
  const std::set<std::string> bundled_names = [&] {
    std::set<std::string> names;
    for (const auto& [name, d] : registry->definitions_) names.insert(name);
    return names;
  }();

  for (const std::string& root_name : options.datasets) {
    std::error_code ec;
    const fs::path root = fs::absolute(root_name, ec).lexically_normal();
    if (!fs::is_directory(root / "definitions", ec)) {
      return absl::NotFoundError(absl::StrCat("dataset '", root_name,
                                              "' has no definitions/ folder (is it a "
                                              "FlashInfer-Trace dataset root?)"));
    }
    RootLoad load = LoadRoot(root, root.string());
    if (load.definitions.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dataset '", root_name, "' yields no definition",
          load.problems.empty() ? " (definitions/ holds no .json file)"
                                : absl::StrCat(": ", absl::StrJoin(load.problems, "; "))));
    }
    for (std::string& p : load.problems) registry->problems_.push_back(std::move(p));
    for (Definition& d : load.definitions) {
      const std::string& file = load.file_of[d.name];
      auto previous = origin.find(d.name);
      const bool replaces_bundled = previous != origin.end() && bundled_names.contains(d.name) &&
                                    previous->second == bundled.file_of[d.name];
      if (previous != origin.end() && !(replaces_bundled && options.prefer_datasets)) {
        registry->problems_.push_back(Skipped(
            file, absl::StrCat("definition '", d.name, "' is already defined by ", previous->second,
                               replaces_bundled ? "; pass --prefer-dataset to use the dataset's" : "")));
        continue;
      }
      origin[d.name] = file;
      registry->definitions_.insert_or_assign(d.name, std::move(d));
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
        "unknown definition '", name, "' (known: ", absl::StrJoin(known, ", "), ")",
        problems_.empty() ? ""
                          : absl::StrCat("; ", problems_.size(),
                                         " file(s) of the datasets were skipped: ",
                                         absl::StrJoin(problems_, "; "))));
  }
  return &it->second;
}

std::vector<const Definition*> DefinitionRegistry::List() const {
  std::vector<const Definition*> out;
  for (const auto& [name, d] : definitions_) out.push_back(&d);
  return out;
}

}  // namespace ptxbench::workloads
