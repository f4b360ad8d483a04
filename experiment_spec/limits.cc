#include "experiment_spec/limits.h"

#include "absl/strings/str_cat.h"

namespace ptxbench::experiment_spec {

absl::Status NoTurnsWithAgent(const JsonReader& json, absl::string_view field,
                              const StrictJson& value, absl::string_view where) {
  return json.Error(field, value, absl::StrCat("no num_turns ", where),
                    "a session's evaluations are limited by agent.max_evaluations");
}

}  // namespace ptxbench::experiment_spec
