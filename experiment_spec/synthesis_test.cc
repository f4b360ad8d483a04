// Synthesis specs (synthesis.h): one trajectory per (model, row), the row's
// prompt file as its task prompt, nothing evaluated; bad input refused with
// one message naming the field.
#include "experiment_spec/synthesis.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "experiment_spec/references.h"
#include "experiment_spec/spec_test_fixture.h"

namespace ptxbench::experiment_spec {
namespace {

using ::testing::HasSubstr;

class SynthesisSpecTest : public SpecTest {
 protected:
  static Json Spec() {
    return Json::parse(R"({
      "name": "fixit.reasoning.abc", "mode": "synthesis", "models": ["simulated"],
      "system": "You explain kernels.", "min_chars": 10, "max_chars": 500, "max_passes": 3,
      "max_tokens": 8192,
      "rows": [{"definition": "gemm_n7168_k5120", "prompt_path": "rows/0.txt"},
               {"definition": "mha_with_lse_d128", "prompt_path": "rows/1.txt"}]})");
  }
  static absl::StatusOr<ExpandedExperiment> ExpandWith(const Json& spec,
                                                       std::map<std::string, std::string> files) {
    SpecInput input;
    input.text = spec.dump();
    input.path = "synth.json";
    input.files = std::move(files);
    return ExpandSpec(input, *definitions_, *prompts_, {});
  }
  static std::map<std::string, std::string> Files() {
    return {{"rows/0.txt", "Explain the GEMM fix."}, {"rows/1.txt", "Explain the MHA kernel."}};
  }
};

TEST_F(SynthesisSpecTest, EachRowIsATrajectoryWithItsPromptAndNothingIsEvaluated) {
  absl::StatusOr<ExpandedExperiment> x = ExpandWith(Spec(), Files());
  ASSERT_TRUE(x.ok()) << x.status();
  ASSERT_TRUE(x->synthesis.has_value());
  EXPECT_EQ(x->synthesis->system, "You explain kernels.");
  EXPECT_EQ(x->synthesis->max_passes, 3);
  EXPECT_EQ(x->synthesis->max_tokens, 8192);
  EXPECT_EQ(x->eval_mode, v1::EVAL_MODE_UNSPECIFIED);
  EXPECT_TRUE(x->pytorch_references.empty()) << "no reference is needed";
  ASSERT_EQ(x->trajectories.size(), 2u);
  EXPECT_EQ(x->trajectories[1].definition, "mha_with_lse_d128");
  EXPECT_EQ(x->trajectories[1].synthesis_prompt, "Explain the MHA kernel.");
  EXPECT_EQ(x->trajectories[1].sample_index, 1) << "the row";
  EXPECT_EQ(x->trajectories[1].num_turns, 3) << "its passes";
  // The spec's hash covers the prompts by their hashes, not their text.
  EXPECT_THAT(x->normalized_json, HasSubstr("prompt_sha256"));
  EXPECT_THAT(x->normalized_json, ::testing::Not(HasSubstr("Explain the")));
  std::map<std::string, std::string> changed = Files();
  changed["rows/1.txt"] = "Explain it differently.";
  absl::StatusOr<ExpandedExperiment> y = ExpandWith(Spec(), changed);
  ASSERT_TRUE(y.ok());
  EXPECT_NE(y->spec_hash, x->spec_hash);
  // `ptxbench submit` sends the rows' files.
  const SpecReferences refs = ReferencesOf(Spec().dump());
  ASSERT_EQ(refs.files.size(), 2u);
  EXPECT_EQ(refs.files[1].path, "rows/1.txt");
}

TEST_F(SynthesisSpecTest, BadInputIsOneMessageNamingTheField) {
  Json unknown = Spec();
  unknown["num_turns"] = 3;
  ExpectInvalid(ExpandWith(unknown, Files()),
                "synth.json: $.num_turns: expected a known key (name, mode, models, system, "
                "take, min_chars, max_chars, max_passes, max_tokens, rows, priority, "
                "max_cost_usd), found an unknown key");
  Json bounds = Spec();
  bounds["max_chars"] = 5;
  ExpectInvalid(ExpandWith(bounds, Files()),
                "synth.json: $.max_chars: expected at least min_chars (10), or 0, found 5");
  std::map<std::string, std::string> missing = Files();
  missing.erase("rows/1.txt");
  absl::StatusOr<ExpandedExperiment> no_file = ExpandWith(Spec(), missing);
  ASSERT_FALSE(no_file.ok());
  EXPECT_THAT(no_file.status().message(), HasSubstr("$.rows[1].prompt_path"));
  Json definition = Spec();
  definition["rows"][0]["definition"] = "no_such_definition";
  absl::StatusOr<ExpandedExperiment> unknown_definition = ExpandWith(definition, Files());
  ASSERT_FALSE(unknown_definition.ok());
  EXPECT_THAT(unknown_definition.status().message(), HasSubstr("$.rows[0].definition"));
}

}  // namespace
}  // namespace ptxbench::experiment_spec
