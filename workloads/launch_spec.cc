#include "workloads/launch_spec.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "workloads/expression.h"

namespace ptxbench::workloads {
namespace {

using nlohmann::json;

constexpr int64_t kMaxThreadsPerBlock = 1024;
constexpr int64_t kMaxDynamicSharedBytes = 227 * 1024;  // sm_90 opt-in limit per block

absl::StatusOr<std::string> ExpressionField(const json& value, const std::string& where) {
  if (value.is_number_integer()) return std::to_string(value.get<int64_t>());
  if (value.is_string()) return value.get<std::string>();
  return absl::InvalidArgumentError(
      absl::StrCat("launch spec: ", where, " must be an integer or an expression string"));
}

absl::Status Triple(const json& j, const char* key, std::array<std::string, 3>* out) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_array() || it->empty() || it->size() > 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("launch spec: \"", key, "\" must be a list of 1 to 3 dimensions"));
  }
  for (size_t i = 0; i < 3; ++i) {
    if (i >= it->size()) {
      (*out)[i] = "1";
      continue;
    }
    absl::StatusOr<std::string> e = ExpressionField((*it)[i], absl::StrCat(key, "[", i, "]"));
    if (!e.ok()) return e.status();
    (*out)[i] = *e;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LaunchSpec> ParseLaunchSpec(absl::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError("launch spec: not a JSON object");
  }
  for (const auto& [key, value] : j.items()) {
    if (key != "entry" && key != "grid" && key != "block" && key != "shared_mem_bytes") {
      return absl::InvalidArgumentError(absl::StrCat(
          "launch spec: unknown field \"", key, "\" (entry, grid, block, shared_mem_bytes)"));
    }
  }
  LaunchSpec spec;
  auto entry = j.find("entry");
  if (entry == j.end() || !entry->is_string() || entry->get<std::string>().empty()) {
    return absl::InvalidArgumentError("launch spec: \"entry\" (the .entry name) is required");
  }
  spec.entry = entry->get<std::string>();
  if (absl::Status s = Triple(j, "grid", &spec.grid); !s.ok()) return s;
  if (absl::Status s = Triple(j, "block", &spec.block); !s.ok()) return s;
  if (auto smem = j.find("shared_mem_bytes"); smem != j.end()) {
    absl::StatusOr<std::string> e = ExpressionField(*smem, "shared_mem_bytes");
    if (!e.ok()) return e.status();
    spec.shared_mem_bytes = *e;
  }
  return spec;
}

std::string LaunchSpecJson(const LaunchSpec& spec) {
  return json{{"entry", spec.entry},
              {"grid", spec.grid},
              {"block", spec.block},
              {"shared_mem_bytes", spec.shared_mem_bytes}}
      .dump();
}

std::optional<std::string> FindLaunchSpecJson(absl::string_view ptx_source) {
  std::optional<std::string> found;
  for (absl::string_view line : absl::StrSplit(ptx_source, '\n')) {
    line = absl::StripLeadingAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, kLaunchSpecPrefix)) found = std::string(line);
  }
  return found;
}


absl::StatusOr<LaunchConfig> Resolve(const LaunchSpec& spec,
                                     const std::map<std::string, int64_t>& axes) {
  LaunchConfig c;
  // CUDA's limits: grid x < 2^31, y and z < 2^16; a block dimension <= 1024.
  constexpr int64_t kMaxGrid[3] = {(int64_t{1} << 31) - 1, 65535, 65535};
  for (int i = 0; i < 3; ++i) {
    for (auto [exprs, values, name] : {std::tuple{&spec.grid, &c.grid, "grid"},
                                      std::tuple{&spec.block, &c.block, "block"}}) {
      absl::StatusOr<int64_t> v = EvaluateExpression((*exprs)[i], axes);
      if (!v.ok()) return v.status();
      const int64_t max = values == &c.grid ? kMaxGrid[i] : kMaxThreadsPerBlock;
      if (*v < 1 || *v > max) {
        return absl::InvalidArgumentError(
            absl::StrCat("launch spec: ", name, "[", i, "] = ", (*exprs)[i], " = ", *v,
                         " (must be 1 to ", max, ")"));
      }
      (*values)[i] = *v;
    }
  }
  if (c.block[0] * c.block[1] * c.block[2] > kMaxThreadsPerBlock) {
    return absl::InvalidArgumentError(absl::StrCat("launch spec: block has ",
                                                   c.block[0] * c.block[1] * c.block[2],
                                                   " threads (at most 1024)"));
  }
  absl::StatusOr<int64_t> smem = EvaluateExpression(spec.shared_mem_bytes, axes);
  if (!smem.ok()) return smem.status();
  if (*smem < 0 || *smem > kMaxDynamicSharedBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "launch spec: shared_mem_bytes = ", *smem, " (0 to ", kMaxDynamicSharedBytes, ")"));
  }
  c.shared_mem_bytes = *smem;
  return c;
}

std::string WithLaunchSpecLine(absl::string_view ptx_source, absl::string_view spec_json) {
  json j = json::parse(spec_json, nullptr, /*allow_exceptions=*/false);
  std::string line = j.is_discarded() ? absl::StrReplaceAll(spec_json, {{"\n", " "}}) : j.dump();
  return absl::StrCat(ptx_source, absl::EndsWith(ptx_source, "\n") ? "" : "\n", kLaunchSpecPrefix,
                      line, "\n");
}

absl::Status CheckLaunchSpec(absl::string_view ptx_source, const Definition& definition,
                             const std::vector<std::string>& entries) {
  std::optional<std::string> line = FindLaunchSpecJson(ptx_source);
  if (!line) {
    return absl::InvalidArgumentError(
        "no launch spec: a raw-PTX submission needs a ```json block with the entry and its "
        "launch configuration, e.g. {\"entry\": \"my_kernel\", \"grid\": [\"(N + 127) / 128\", "
        "\"(M + 127) / 128\", 1], \"block\": [128, 1, 1], \"shared_mem_bytes\": 0}");
  }
  absl::StatusOr<LaunchSpec> spec = ParseLaunchSpec(*line);
  if (!spec.ok()) return spec.status();
  if (std::find(entries.begin(), entries.end(), spec->entry) == entries.end()) {
    return absl::InvalidArgumentError(absl::StrCat("launch spec: the module has no .entry \"",
                                                   spec->entry, "\" (it has: ",
                                                   absl::StrJoin(entries, ", "), ")"));
  }
  for (const Workload& w : definition.workloads) {
    absl::StatusOr<std::map<std::string, int64_t>> axes = definition.AxisValues(w);
    if (!axes.ok()) return axes.status();
    absl::StatusOr<LaunchConfig> config = Resolve(*spec, *axes);
    if (!config.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(config.status().message(), " (at workload ", w.uuid, ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace ptxbench::workloads
