#ifndef PTXBENCH_TESTS_GATEWAY_TEST_UTIL_H_
#define PTXBENCH_TESTS_GATEWAY_TEST_UTIL_H_

// Small helpers shared by the tests that run a real gateway against fake
// provider servers: registry and spec files, and a search for a secret in
// everything a cluster wrote.

#include <filesystem>
#include <string>
#include <vector>

#include "common/file.h"
#include "nlohmann/json.hpp"
#include "tests/cluster.h"

namespace ptxbench::testing {

// A registry file with one model `name`; `extra` is merged into the entry
// (price, limits, ...). Returns the path.
inline std::string WriteRegistry(const Cluster& c, const std::string& name,
                                 const std::string& provider, const std::string& base_url,
                                 const std::string& key_env, const nlohmann::json& extra = {}) {
  nlohmann::json entry = {{"provider", provider},
                          {"base_url", base_url},
                          {"model_id", "served-model-1"},
                          {"api_key_env", key_env}};
  if (extra.is_object()) entry.update(extra);
  return c.WriteFile("models.json", nlohmann::json{{"models", {{name, entry}}}}.dump(2));
}

// Submits `samples` trajectories of `turns` turns for `model`; returns the
// experiment id ("" on failure).
inline std::string SubmitSpec(const Cluster& c, const std::string& name, const std::string& model,
                              int samples, int turns) {
  const nlohmann::json spec = {{"name", name},
                               {"models", {model}},
                               {"definitions", {"gemm_n7168_k5120"}},
                               {"prompt_tags", {"ptxb-no-hint"}},
                               {"samples", samples},
                               {"num_turns", turns},
                               {"target_speedup", 1.0},
                               {"eval", "compile-only"}};
  return c.Submit(c.WriteFile(name + ".json", spec.dump(2)));
}

// The files under the cluster's folder (database, WAL, logs) holding `secret`.
inline std::vector<std::string> FilesContaining(const Cluster& c, const std::string& secret) {
  std::vector<std::string> found;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(c.dir())) {
    if (!entry.is_regular_file()) continue;
    if (ReadFile(entry.path().string()).value_or("").find(secret) != std::string::npos) {
      found.push_back(entry.path().string());
    }
  }
  return found;
}

}  // namespace ptxbench::testing

#endif  // PTXBENCH_TESTS_GATEWAY_TEST_UTIL_H_
