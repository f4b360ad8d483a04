#include "experiment_spec/references.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/gpu_arch.h"

namespace ptxbench::experiment_spec {
namespace {

using Json = nlohmann::json;

std::vector<std::string> Architectures(const Json& doc) {
  if (!doc.is_object() || !doc.contains("architectures") || !doc["architectures"].is_array()) {
    return DefaultArchitectures();
  }
  std::vector<std::string> names;
  for (const Json& name : doc["architectures"]) {
    if (!name.is_string()) return DefaultArchitectures();
    names.push_back(name.get<std::string>());
  }
  absl::StatusOr<std::vector<std::string>> parsed = ParseArchitectures(names);
  return parsed.ok() ? *std::move(parsed) : DefaultArchitectures();
}

std::string StringOf(const Json& doc, const char* key) {
  return doc.contains(key) && doc[key].is_string() ? doc[key].get<std::string>() : "";
}

// A PTXBench coding-agent experiment.json: its runs' tags, its hub, the
// TVM-FFI example it appends to their prompts, what it names in vain.
void PtxbenchAgentReferences(const Json& doc, SpecReferences& out) {
  out.agent_mode = true;
  out.hub = StringOf(doc, "prompt_hub");
  out.hub_documents = StringOf(doc, "prompt_files_root");
  if (std::string example = StringOf(doc, "tvm_ffi_example"); !example.empty()) {
    out.files.push_back({"tvm_ffi_example", example});
  }
  for (const auto& [field, why] : kPtxbenchAgentIgnored) {
    if (doc.contains(field)) out.ignored.push_back(absl::StrCat(field, ": ", why));
  }
  if (!doc["runs"].is_array()) return;
  for (const Json& run : doc["runs"]) {
    if (!run.is_object()) continue;
    for (const char* key : {"prompt_tag", "extra_user_prompt_tag"}) {
      if (std::string tag = StringOf(run, key); !tag.empty()) out.prompt_tags.insert(tag);
    }
  }
}

}  // namespace

SpecReferences ReferencesOf(absl::string_view spec_text) {
  SpecReferences out;
  const Json doc = Json::parse(spec_text, nullptr, /*allow_exceptions=*/false);
  out.architectures = Architectures(doc);
  if (doc.is_object()) {
    if (std::string language = StringOf(doc, "language"); !language.empty()) {
      out.language = language;
    }
  }
  if (doc.is_object() && doc.contains("name") && doc["name"].is_string()) {
    out.name = doc["name"].get<std::string>();
  }
  if (doc.is_object() && doc.contains("prompt_tags") && doc["prompt_tags"].is_array()) {
    for (const Json& tag : doc["prompt_tags"]) {
      if (tag.is_string()) out.prompt_tags.insert(tag.get<std::string>());
    }
  }
  if (doc.is_object() && doc.contains("runs")) {
    PtxbenchAgentReferences(doc, out);
    return out;
  }
  out.agent_mode = doc.is_object() && doc.contains("mode") && doc["mode"] == "agent";
  // A synthesis spec's rows name their prompt files.
  if (doc.is_object() && doc.contains("mode") && doc["mode"] == "synthesis" &&
      doc.contains("rows") && doc["rows"].is_array()) {
    for (size_t i = 0; i < doc["rows"].size(); ++i) {
      const Json& row = doc["rows"][i];
      if (row.is_object() && row.contains("prompt_path") && row["prompt_path"].is_string()) {
        out.files.push_back(
            {absl::StrCat("row [", i, "]: prompt_path"), row["prompt_path"].get<std::string>()});
      }
    }
    return out;
  }
  // A list config's items (the array, or the object form's "items"), or a
  // PTXBench plan.json's entries.
  const Json& items = doc.is_object() && doc.contains("plan")    ? doc["plan"]
                      : doc.is_object() && doc.contains("items") ? doc["items"]
                                                                 : doc;
  if (!items.is_array()) return out;
  for (size_t i = 0; i < items.size(); ++i) {
    const Json& item = items[i];
    if (!item.is_object()) continue;
    if (item.contains("prompt_tag") && item["prompt_tag"].is_string()) {
      out.prompt_tags.insert(item["prompt_tag"].get<std::string>());
    }
    for (const char* field : kItemFileFields) {
      if (item.contains(field) && item[field].is_string()) {
        out.files.push_back(
            {absl::StrCat("item [", i, "]: ", field), item[field].get<std::string>()});
      }
    }
  }
  return out;
}

}  // namespace ptxbench::experiment_spec
