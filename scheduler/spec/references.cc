#include "scheduler/spec/references.h"

#include <nlohmann/json.hpp>

#include "common/gpu_arch.h"

namespace ptxbench::scheduler {
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

}  // namespace

SpecReferences ReferencesOf(absl::string_view spec_text) {
  SpecReferences out;
  const Json doc = Json::parse(spec_text, nullptr, /*allow_exceptions=*/false);
  out.architectures = Architectures(doc);
  if (doc.is_object() && doc.contains("name") && doc["name"].is_string()) {
    out.name = doc["name"].get<std::string>();
  }
  if (doc.is_object() && doc.contains("prompt_tags") && doc["prompt_tags"].is_array()) {
    for (const Json& tag : doc["prompt_tags"]) {
      if (tag.is_string()) out.prompt_tags.insert(tag.get<std::string>());
    }
  }
  // A list config's items, or a PTXBench plan.json's entries.
  const Json& items = doc.is_object() && doc.contains("plan") ? doc["plan"] : doc;
  if (!items.is_array()) return out;
  for (size_t i = 0; i < items.size(); ++i) {
    const Json& item = items[i];
    if (!item.is_object()) continue;
    if (item.contains("prompt_tag") && item["prompt_tag"].is_string()) {
      out.prompt_tags.insert(item["prompt_tag"].get<std::string>());
    }
    for (const char* field : kItemFileFields) {
      if (item.contains(field) && item[field].is_string()) {
        out.files.push_back({i, field, item[field].get<std::string>()});
      }
    }
  }
  return out;
}

}  // namespace ptxbench::scheduler
