#include "prompts/prompts.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/data_dir.h"
#include "common/file.h"
#include "common/json_reader.h"
#include "common/status_macros.h"
#include "prompts/languages.h"
#include "prompts/targets.h"

namespace ptxbench::prompts {
namespace {

namespace fs = std::filesystem;
using Json = StrictJson;

bool IsDocumentEntry(absl::string_view entry) {
  return absl::EndsWith(entry, ".md") || absl::EndsWith(entry, ".txt") ||
         absl::StrContains(entry, '/');
}

bool IsTagName(absl::string_view name) {
  if (name.empty() || name.size() > 100) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// A document path must stay inside the prompt root.
bool IsSafeRelativePath(absl::string_view path) {
  if (path.empty() || path.front() == '/') return false;
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part.empty() || part == "." || part == "..") return false;
  }
  return true;
}

// One tag of a registry or a hub: a valid name and a non-empty list of
// non-empty strings, returned in order.
absl::StatusOr<std::vector<std::string>> TagEntries(const JsonReader& r,
                                                    const std::string& field,
                                                    const std::string& tag,
                                                    const Json& entries) {
  if (!IsTagName(tag) || IsDocumentEntry(tag)) {
    return r.ErrorFound(field, Json(tag).dump(),
                        "a tag name of [A-Za-z0-9._-]{1,100} not ending in .md/.txt");
  }
  if (!entries.is_array() || entries.empty()) {
    return r.Error(field, entries, "a non-empty list of documents and tags");
  }
  std::vector<std::string> names;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Json& entry = entries[i];
    if (!entry.is_string() || entry.get<std::string>().empty()) {
      return r.Error(JsonIndex(field, i), entry, "a document path or a tag name");
    }
    names.push_back(entry.get<std::string>());
  }
  return names;
}

std::string Trimmed(absl::string_view text) {
  return std::string(absl::StripAsciiWhitespace(text));
}

// A fence longer than any run of backticks inside `text`, so the block
// cannot be closed early by the text it holds.
std::string FenceFor(absl::string_view text) {
  size_t longest = 0, run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return std::string(std::max<size_t>(3, longest + 1), '`');
}

// The definition as JSON when the file text is not at hand (definitions built
// in code): the FlashInfer-Trace fields that describe the task.
std::string DefinitionJson(const workloads::Definition& d) {
  if (!absl::StripAsciiWhitespace(d.json).empty()) return Trimmed(d.json);
  nlohmann::ordered_json doc;
  doc["name"] = d.name;
  doc["op_type"] = d.op_type;
  doc["description"] = d.description;
  doc["axes"] = nlohmann::ordered_json::object();
  for (const workloads::Axis& axis : d.axes) {
    doc["axes"][axis.name] =
        axis.is_const ? nlohmann::ordered_json{{"type", "const"}, {"value", axis.value}}
                      : nlohmann::ordered_json{{"type", "var"}};
  }
  for (const char* group : {"inputs", "outputs"}) {
    const auto& tensors = std::string(group) == "inputs" ? d.inputs : d.outputs;
    doc[group] = nlohmann::ordered_json::object();
    for (const workloads::TensorSpec& t : tensors) {
      doc[group][t.name] = {{"shape", t.is_scalar ? nlohmann::ordered_json(nullptr)
                                                  : nlohmann::ordered_json(t.shape)},
                            {"dtype", t.dtype}};
    }
  }
  doc["reference"] = d.reference;
  return doc.dump(2);
}

}  // namespace

absl::Status PromptRegistry::LoadHub(const std::string& hub, const std::string& folder) {
  const fs::path path = fs::is_directory(hub) ? fs::path(hub) / "hub.json" : fs::path(hub);
  const std::string origin = path.string();
  PTXB_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  PTXB_ASSIGN_OR_RETURN(Json doc, ParseStrictJson(text, origin));
  const JsonReader r(origin);
  if (!doc.is_object() || doc.empty()) {
    return r.Error("", doc, "a non-empty object of tag -> list of entries (a PTXBench prompt hub)");
  }
  // Shapes first; the documents of every tag, to choose the folder.
  std::vector<std::pair<std::string, std::string>> documents;  // (tag, path)
  std::map<std::string, std::vector<std::string>> hub_entries;
  for (const auto& [tag, entries] : doc.items()) {
    const std::string field = JsonField("", tag);
    PTXB_ASSIGN_OR_RETURN(std::vector<std::string> names, TagEntries(r, field, tag, entries));
    if (tags_.contains(tag)) {
      return r.ErrorFound(field, Json(tag).dump(), "a tag name no bundled tag has",
                          absl::StrCat("prompt tag '", tag, "' is also a bundled tag of ", root_,
                                       "; one name may not mean two prompts"));
    }
    for (size_t i = 0; i < names.size(); ++i) {
      const std::string& name = names[i];
      if (!absl::StrContains(name, '/')) {
        if (!doc.contains(name)) {
          return r.Error(JsonIndex(field, i), entries[i],
                         "a tag of this hub or a document (a document entry holds a '/')",
                         absl::StrCat("tag '", tag, "' references '", name,
                                      "', which is no tag of this hub"));
        }
        continue;
      }
      if (!IsSafeRelativePath(name)) {
        return r.Error(JsonIndex(field, i), entries[i],
                       "a relative document path that stays inside the hub's folder");
      }
      documents.emplace_back(tag, name);
    }
    hub_entries[tag] = std::move(names);
  }
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::vector<fs::path> candidates = {dir / "fragments", dir, dir / "..", dir / ".." / ".."};
  if (!folder.empty()) candidates.assign(4, fs::path(folder));  // the caller knows
  const fs::path* base = nullptr;
  for (const fs::path& c : candidates) {
    const bool all = std::all_of(documents.begin(), documents.end(), [&](const auto& d) {
      return fs::is_regular_file(c / d.second);
    });
    if (all) {
      base = &c;
      break;
    }
  }
  if (base == nullptr) {
    // Name the first document missing from the likeliest folder.
    const fs::path& likeliest = fs::is_directory(candidates[0]) ? candidates[0] : candidates[1];
    for (const auto& [tag, name] : documents) {
      if (!fs::is_regular_file(likeliest / name)) {
        const std::string looked =
            folder.empty()
                ? absl::StrCat("looked in ", candidates[0].string(), ", ", candidates[1].string(),
                               ", ", candidates[2].string(), " and ", candidates[3].string(),
                               ", for one folder that holds all the hub's documents")
                : absl::StrCat("looked in ", folder, ", the documents' folder given");
        return absl::NotFoundError(absl::StrCat(origin, ": tag '", tag, "': document ", name,
                                                " not found (", looked, ")"));
      }
    }
  }
  for (const auto& [tag, names] : hub_entries) {
    std::vector<std::string>& list = tags_[tag];
    for (const std::string& name : names) {
      if (!absl::StrContains(name, '/')) {
        list.push_back(name);
        continue;
      }
      const std::string key = absl::StrCat("hub:", name);
      if (!documents_.contains(key)) {
        PTXB_ASSIGN_OR_RETURN(documents_[key], ReadFile(*base / name));
      }
      list.push_back(key);
    }
    hub_tags_.insert(tag);
  }
  hub_ = origin;
  return absl::OkStatus();
}

std::string PromptRegistry::AssembleHubTag(const std::string& tag) const {
  std::string out;
  for (const std::string& entry : tags_.find(tag)->second) {
    absl::StrAppend(&out, IsDocumentEntry(entry) ? documents_.find(entry)->second
                                                 : AssembleHubTag(entry),
                    "\n\n");
  }
  return out;
}

std::string PromptRegistry::Origin() const {
  return hub_.empty() ? root_ : absl::StrCat(root_, " and the hub ", hub_);
}

absl::StatusOr<std::unique_ptr<PromptRegistry>> PromptRegistry::Load(
    const std::string& root, const std::string& hub, const std::string& hub_documents) {
  const fs::path registry_path = fs::path(root) / "registry.json";
  const std::string origin = registry_path.string();
  PTXB_ASSIGN_OR_RETURN(std::string text, ReadFile(registry_path));
  PTXB_ASSIGN_OR_RETURN(Json doc, ParseStrictJson(text, origin));
  const JsonReader r(origin);
  if (!doc.is_object()) return r.Error("", doc, "an object with a \"tags\" object");
  PTXB_RETURN_IF_ERROR(r.CheckKeys(doc, "", {"tags"}, /*allow_comments=*/true));
  PTXB_ASSIGN_OR_RETURN(const Json* tags_json, r.Required(doc, "", "tags"));
  const Json& tags = *tags_json;
  if (!tags.is_object() || tags.empty()) {
    return r.Error("tags", tags, "a non-empty object of tag -> list of entries");
  }

  auto registry = std::unique_ptr<PromptRegistry>(new PromptRegistry());
  registry->root_ = root;
  // Shape of every tag, and every document read once.
  for (const auto& [tag, entries] : tags.items()) {
    const std::string field = JsonField("tags", tag);
    PTXB_ASSIGN_OR_RETURN(std::vector<std::string> names, TagEntries(r, field, tag, entries));
    std::vector<std::string>& list = registry->tags_[tag];
    for (size_t i = 0; i < names.size(); ++i) {
      const Json& entry = entries[i];
      const std::string& name = names[i];
      if (IsDocumentEntry(name) && !registry->documents_.contains(name)) {
        if (!IsSafeRelativePath(name)) {
          return r.Error(JsonIndex(field, i), entry,
                         "a relative document path that stays inside the root");
        }
        const fs::path path = fs::path(root) / name;
        if (!fs::is_regular_file(path)) {
          return r.Error(JsonIndex(field, i), entry, "a document under the root",
                         absl::StrCat("tag '", tag, "': no file at ", path.string()));
        }
        PTXB_ASSIGN_OR_RETURN(registry->documents_[name], ReadFile(path));
      }
      list.push_back(name);
    }
  }
  if (!hub.empty()) PTXB_RETURN_IF_ERROR(registry->LoadHub(hub, hub_documents));
  // References to tags that do not exist.
  for (const auto& [tag, list] : registry->tags_) {
    for (size_t i = 0; i < list.size(); ++i) {
      if (!IsDocumentEntry(list[i]) && !registry->tags_.contains(list[i])) {
        return r.Error(JsonIndex(JsonField("tags", tag), i), Json(list[i]),
                       "a document or a known tag",
                       absl::StrCat("tag '", tag, "' references unknown tag '", list[i], "'"));
      }
    }
  }
  // Cycles: depth-first from every tag, in name order, so the reported cycle
  // is the same on every run.
  std::map<std::string, int> state;  // 0 new, 1 on the current path, 2 done
  std::vector<std::string> path;
  std::function<absl::Status(const std::string&)> visit =
      [&](const std::string& tag) -> absl::Status {
    if (state[tag] == 2) return absl::OkStatus();
    if (state[tag] == 1) {
      auto start = std::find(path.begin(), path.end(), tag);
      std::vector<std::string> cycle(start, path.end());
      cycle.push_back(tag);
      const bool in_hub = registry->hub_tags_.contains(tag);
      return JsonReader(in_hub ? registry->hub_ : origin)
          .Error(in_hub ? JsonField("", tag) : JsonField("tags", tag),
                 Json(registry->tags_.find(tag)->second), "tags that do not form a cycle",
                 absl::StrCat("prompt tags form a cycle: ", absl::StrJoin(cycle, " -> ")));
    }
    state[tag] = 1;
    path.push_back(tag);
    for (const std::string& entry : registry->tags_.find(tag)->second) {
      if (!IsDocumentEntry(entry)) PTXB_RETURN_IF_ERROR(visit(entry));
    }
    path.pop_back();
    state[tag] = 2;
    return absl::OkStatus();
  };
  for (const auto& [tag, list] : registry->tags_) PTXB_RETURN_IF_ERROR(visit(tag));

  // The ABI descriptions are optional at load time (a custom prompt root may
  // serve one language only); rendering for a missing one fails.
  for (const std::string& language : KernelLanguages()) {
    const std::string name = absl::StrCat("abi/", language, ".md");
    const fs::path abi_path = fs::path(root) / name;
    if (fs::is_regular_file(abi_path)) {
      PTXB_ASSIGN_OR_RETURN(registry->documents_[name], ReadFile(abi_path));
    }
  }
  return registry;
}

const std::vector<std::string>& PromptRegistry::Languages() { return KernelLanguages(); }

std::string PromptRegistry::BundledRoot() { return DataDir() + "/prompts"; }

absl::Status PromptRegistry::Check(absl::string_view tag) const {
  if (tags_.find(tag) != tags_.end()) return absl::OkStatus();
  return absl::NotFoundError(absl::StrCat(
      "unknown prompt tag '", tag, "' (known: ", absl::StrJoin(Tags(), ", "), ")",
      hub_.empty() ? "; a PTXBench tag needs its hub: pass --prompts PATH/hub.json" : ""));
}

std::vector<std::string> PromptRegistry::Tags() const {
  std::vector<std::string> out;
  for (const auto& [tag, list] : tags_) out.push_back(tag);
  return out;
}

void PromptRegistry::ExpandInto(const std::vector<std::string>& entries,
                                std::vector<std::string>& documents) const {
  // Load() rejected unknown tags and cycles, so this terminates.
  for (const std::string& entry : entries) {
    if (IsDocumentEntry(entry)) {
      if (std::find(documents.begin(), documents.end(), entry) == documents.end()) {
        documents.push_back(entry);
      }
    } else {
      ExpandInto(tags_.find(entry)->second, documents);
    }
  }
}

absl::StatusOr<std::vector<std::string>> PromptRegistry::Documents(
    absl::string_view tag) const {
  PTXB_RETURN_IF_ERROR(Check(tag));
  std::vector<std::string> documents;
  ExpandInto(tags_.find(tag)->second, documents);
  return documents;
}

bool PromptRegistry::AsksForProfile(absl::string_view tag) const {
  if (!tags_.contains(tag)) return false;
  std::vector<std::string> documents;
  ExpandInto(tags_.find(tag)->second, documents);
  return std::find(documents.begin(), documents.end(), kProfileDocument) != documents.end();
}

absl::StatusOr<std::string> PromptRegistry::RenderSystemPrompt(
    absl::string_view tag, absl::string_view language,
    const std::vector<std::string>& architectures) const {
  PTXB_ASSIGN_OR_RETURN(std::string text, TagText(tag, architectures));
  return WithAbi(text, language, architectures);
}

std::vector<std::string> PromptRegistry::NamesOf(absl::string_view tag) const {
  std::vector<std::string> names = {std::string(tag)};
  if (absl::StatusOr<std::vector<std::string>> documents = Documents(tag); documents.ok()) {
    names.insert(names.end(), documents->begin(), documents->end());
  }
  return names;
}

bool PromptRegistry::IsTritonTag(absl::string_view tag) const {
  const std::vector<std::string> names = NamesOf(tag);
  return std::any_of(names.begin(), names.end(), [](const std::string& name) {
    return absl::StrContains(absl::AsciiStrToLower(name), "triton");
  });
}

absl::Status PromptRegistry::CheckTarget(absl::string_view tag,
                                         const std::vector<std::string>& architectures,
                                         absl::string_view language) const {
  // A prompt teaches one language; the experiment's says which the answers
  // are evaluated as, so the two must agree or every answer fails to extract.
  const bool triton_tag = IsTritonTag(tag);
  if (triton_tag && language != "triton") {
    return absl::FailedPreconditionError(absl::StrCat(
        "prompt tag '", tag, "' asks for Triton kernels and the experiment's language is ",
        language, ": set \"language\": \"triton\" in the experiment to use it"));
  }
  if (!triton_tag && language == "triton") {
    return absl::FailedPreconditionError(absl::StrCat(
        "prompt tag '", tag, "' asks for CUDA or PTX kernels and the experiment's language is "
        "triton: use a Triton tag (ptxb-triton, or a hub's triton-*) or another language"));
  }
  std::vector<std::string> described;
  for (const std::string& arch : architectures) described.push_back(DescribeArchitecture(arch));
  for (const std::string& name : NamesOf(tag)) {
    for (const std::string& family : FamiliesNamedBy(name)) {
      const bool targeted = std::any_of(architectures.begin(), architectures.end(),
                                        [&](const std::string& a) { return FamilyTitle(a) == family; });
      if (!targeted) {
        return absl::FailedPreconditionError(absl::StrCat(
            "prompt tag '", tag, "' is written for ", family, " GPUs (", name,
            ") and the experiment targets ", absl::StrJoin(described, ", "), ": name \"",
            absl::AsciiStrToLower(family), "\" in the experiment's \"architectures\" to use it"));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> PromptRegistry::TagText(
    absl::string_view tag, const std::vector<std::string>& architectures) const {
  PTXB_ASSIGN_OR_RETURN(std::vector<std::string> documents, Documents(tag));
  if (hub_tags_.contains(tag)) return AssembleHubTag(std::string(tag));
  const TargetText targets = DescribeTargets(architectures);
  std::vector<std::string> parts;
  for (const std::string& document : documents) {
    parts.push_back(FillTargets(Trimmed(documents_.find(document)->second), targets));
  }
  return absl::StrCat(absl::StrJoin(parts, "\n\n"), "\n\n");
}

absl::StatusOr<std::string> PromptRegistry::WithAbi(
    absl::string_view text, absl::string_view language,
    const std::vector<std::string>& architectures) const {
  if (std::find(KernelLanguages().begin(), KernelLanguages().end(), language) ==
      KernelLanguages().end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown kernel language '", language, "' (known: ",
                     absl::StrJoin(KernelLanguages(), ", "), ")"));
  }
  const std::string abi = absl::StrCat("abi/", language, ".md");
  auto abi_text = documents_.find(abi);
  if (abi_text == documents_.end()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "prompt root ", root_, " has no ", abi, " (the kernel ABI for ", language, ")"));
  }
  return absl::StrCat(text, FillTargets(Trimmed(abi_text->second), DescribeTargets(architectures)),
                      "\n");
}

std::string PromptRegistry::RenderRepairPrompt(absl::string_view kernel, absl::string_view log,
                                              absl::string_view language) {
  const std::string code = Trimmed(kernel), text = Trimmed(log);
  const std::string code_fence = FenceFor(code), log_fence = FenceFor(text);
  return absl::StrCat(
      "\nA previous kernel for this task is below; it fails with the error log that follows. "
      "Fix it with the smallest change that makes it correct, then improve it as above.\n\n",
      "The kernel:\n", code_fence, AnswerFence(language), "\n", code, "\n", code_fence,
      "\n\nIts error log:\n", log_fence, "text\n", text, "\n", log_fence, "\n");
}

std::string PromptRegistry::RenderTaskPrompt(const workloads::Definition& definition,
                                             absl::string_view language,
                                             double target_speedup, int num_turns,
                                             const std::vector<std::string>& architectures) {
  const bool ptx = language == "ptx", solution = language == "solution",
             triton = language == "triton";
  std::string out = absl::StrFormat(
      "Write %s for the workload definition `%s` (op type: %s) on %s.\n\n",
      ptx        ? "a raw PTX kernel"
      : solution ? "a CUDA kernel as a FlashInfer-Trace solution"
      : triton   ? "a Triton kernel (a Python module, kernel.py)"
                 : "a CUDA C++ kernel",
      definition.name, definition.op_type, DescribeTargets(architectures).headline);
  absl::StrAppendFormat(
      &out,
      "Goal: every workload passes the correctness check and the minimum speedup over "
      "the reference across all workloads reaches the target of %.3fx.\n"
      "Turn budget: %d %s. After each answer you get the evaluation results; the "
      "conversation ends when the target is met or the turns are spent.\n\n",
      target_speedup, num_turns, num_turns == 1 ? "turn" : "turns");
  if (!definition.workloads.empty()) {
    std::vector<std::string> lines;
    for (const workloads::Workload& w : definition.workloads) {
      std::vector<std::string> axes;
      for (const auto& [axis, value] : w.axes)
        axes.push_back(absl::StrCat(axis, "=", value));
      lines.push_back(absl::StrCat(
          "- ", axes.empty() ? "(all axes const)" : absl::StrJoin(axes, ", ")));
    }
    absl::StrAppend(&out, "Workloads (values of the var axes):\n",
                    absl::StrJoin(lines, "\n"), "\n\n");
  }
  if (ptx) {
    absl::StrAppend(
        &out,
        "Answer with exactly one ```ptx block holding the complete PTX module, "
        "followed by exactly one ```json block with the launch spec.\n\n");
  } else if (triton) {
    absl::StrAppend(&out,
                    "Answer with exactly one ```python block holding the complete kernel.py "
                    "(its @triton.jit kernels and its run()).\n\n");
  } else if (solution) {
    absl::StrAppend(&out,
                    "Answer with exactly one ```json block holding the complete solution "
                    "(its spec and all its sources).\n\n");
  } else {
    absl::StrAppend(
        &out, "Answer with exactly one ```cpp block holding the complete .cu file.\n\n");
  }
  const std::string json = DefinitionJson(definition);
  const std::string fence = FenceFor(json);
  absl::StrAppend(&out,
                  "The definition (axes, inputs, outputs and the PyTorch reference):\n",
                  fence, "json\n", json, "\n", fence, "\n");
  return out;
}

}  // namespace ptxbench::prompts
