// An experiment's lineage in one line (lineage.h).

#include "common/lineage.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"

namespace ptxbench {

std::string LineageText(absl::string_view lineage_json) {
  if (lineage_json.empty()) return "";
  const nlohmann::json j = nlohmann::json::parse(lineage_json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return "";
  auto text = [](const nlohmann::json& o, const char* key) {
    return o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : std::string("?");
  };
  std::string out = absl::StrCat("stage ", text(j, "stage"), " (", text(j, "kind"), ", ",
                                 text(j, "stage_id"), ") of pipeline ", text(j, "pipeline"));
  if (j.contains("role") && j["role"].is_string()) absl::StrAppend(&out, ", the ", text(j, "role"));
  std::vector<std::string> chain;
  if (j.contains("from") && j["from"].is_array()) {
    for (const nlohmann::json& s : j["from"]) {
      if (s.is_object()) chain.push_back(absl::StrCat(text(s, "stage"), " (", text(s, "kind"), ")"));
    }
  }
  if (j.contains("experiments") && j["experiments"].is_array()) {
    for (const nlohmann::json& e : j["experiments"]) {
      if (e.is_string()) chain.push_back(absl::StrCat("experiment ", e.get<std::string>()));
    }
  }
  if (!chain.empty()) absl::StrAppend(&out, ", from ", absl::StrJoin(chain, " <- "));
  return out;
}

}  // namespace ptxbench
