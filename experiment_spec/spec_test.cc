#include "experiment_spec/spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agents/clis.h"
#include "common/file.h"
#include "common/hash.h"
#include "experiment_spec/spec_test_fixture.h"
#include "workloads/testing/datasets.h"

namespace ptxbench::experiment_spec {
namespace {

using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using Json = nlohmann::json;


// ---- Matrix form: expansion. ----

TEST_F(SpecTest, MatrixExpandsModelDefinitionTagSampleInListOrder) {
  auto e = Expand(Matrix());
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->trajectories.size(), 24u);
  std::vector<std::string> keys;
  for (const TrajectorySpec& t : e->trajectories) {
    keys.push_back(
        absl::StrCat(t.model, "/", t.definition, "/", t.prompt_tag, "/", t.sample_index));
    EXPECT_EQ(t.num_turns, 10);
    EXPECT_DOUBLE_EQ(t.target_speedup, 1.5);
    EXPECT_EQ(t.trajectory_id, DeriveTrajectoryId(e->experiment_id, t.model, t.definition,
                                                  t.prompt_tag, t.sample_index));
  }
  EXPECT_EQ(keys[0], "gpt-5/gemm_n7168_k5120/ptxb-no-hint/0");
  EXPECT_EQ(keys[1], "gpt-5/gemm_n7168_k5120/ptxb-no-hint/1");
  EXPECT_EQ(keys[2], "gpt-5/gemm_n7168_k5120/ptxb-no-hint/2");
  EXPECT_EQ(keys[3], "gpt-5/gemm_n7168_k5120/ptxb-expert/0");
  EXPECT_EQ(keys[6], "gpt-5/mha_with_lse_d128/ptxb-no-hint/0");
  EXPECT_EQ(keys[12], "anthropic/claude-opus-4.1/gemm_n7168_k5120/ptxb-no-hint/0");
  EXPECT_EQ(keys[23], "anthropic/claude-opus-4.1/mha_with_lse_d128/ptxb-expert/2");
  std::set<std::string> ids;
  for (const TrajectorySpec& t : e->trajectories) ids.insert(t.trajectory_id);
  EXPECT_EQ(ids.size(), 24u);
}

TEST_F(SpecTest, MatrixFillsDefaults) {
  auto e = Expand(Matrix());
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->name, "sweep-1");
  EXPECT_EQ(e->experiment_id, DeriveExperimentId("sweep-1"));
  EXPECT_EQ(e->priority, 1);
  EXPECT_EQ(e->eval_mode, ptxbench::v1::FULL);
  EXPECT_EQ(e->language, "cuda");
  EXPECT_EQ(e->context_policy, "full");
  EXPECT_DOUBLE_EQ(e->max_cost_usd, 0);
  EXPECT_EQ(e->spec_hash, Sha256Hex(e->normalized_json));
  Json normalized = Json::parse(e->normalized_json);
  EXPECT_EQ(normalized["language"], "cuda");
  EXPECT_EQ(normalized["context_policy"], "full");
  EXPECT_EQ(normalized["eval"], "full");
  EXPECT_EQ(normalized["priority"], 1);
  EXPECT_EQ(normalized["max_cost_usd"], 0.0);
  EXPECT_EQ(normalized["form"], "matrix");
  EXPECT_EQ(e->architectures, std::vector<std::string>{"sm_90"});
  // Left out at its default: specs from before the field keep their hash.
  EXPECT_FALSE(normalized.contains("architectures"));
  // Canonical: compact with sorted keys.
  EXPECT_EQ(e->normalized_json, normalized.dump());
}

TEST_F(SpecTest, MatrixReadsOptionalSettings) {
  Json spec = Matrix();
  spec["context_policy"] = "latest-pair";
  spec["language"] = "ptx";
  spec["priority"] = 5;
  spec["eval"] = "compile-only";
  spec["max_cost_usd"] = 12.5;
  spec["architectures"] = {"blackwell", "sm_90a"};
  auto e = Expand(spec);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->architectures, (std::vector<std::string>{"sm_100", "sm_103", "sm_90"}));
  EXPECT_EQ(Json::parse(e->normalized_json)["architectures"], e->architectures);
  EXPECT_EQ(e->context_policy, "latest-pair");
  EXPECT_EQ(e->language, "ptx");
  EXPECT_EQ(e->priority, 5);
  EXPECT_EQ(e->eval_mode, ptxbench::v1::COMPILE_ONLY);
  EXPECT_DOUBLE_EQ(e->max_cost_usd, 12.5);
}

// The memcheck gate (docs/FORMATS.md): off by default in a matrix (ptxbench's
// own form), written into the normalised spec only when on.
TEST_F(SpecTest, AMatrixAsksForTheMemcheckGateOnlyWhenItSaysSo) {
  auto plain = Expand(Matrix());
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(plain->memcheck);
  EXPECT_FALSE(Json::parse(plain->normalized_json).contains("memcheck"));
  Json spec = Matrix();
  spec["memcheck"] = true;
  auto gated = Expand(spec);
  ASSERT_TRUE(gated.ok()) << gated.status();
  EXPECT_TRUE(gated->memcheck);
  EXPECT_TRUE(NormalizedSpecAsksMemcheck(gated->normalized_json));
  EXPECT_NE(gated->spec_hash, plain->spec_hash);
  spec["memcheck"] = false;
  EXPECT_EQ(Expand(spec)->spec_hash, plain->spec_hash);
  // The gate runs the kernel: a compile-only experiment has none.
  spec["memcheck"] = true;
  spec["eval"] = "compile-only";
  auto compile_only = Expand(spec);
  ASSERT_TRUE(compile_only.ok()) << compile_only.status();
  EXPECT_FALSE(compile_only->memcheck);
  EXPECT_FALSE(NormalizedSpecAsksMemcheck("not json"));
}

// Profiles (docs/FORMATS.md): asked for by the spec or by a prompt tag whose
// text explains them; only "profile": true is written into the normalised
// spec, so every spec before the field keeps its hash.
TEST_F(SpecTest, ProfilesAreAskedForByTheSpecOrByAPromptTag) {
  auto plain = Expand(Matrix());
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(plain->profile);
  EXPECT_FALSE(Json::parse(plain->normalized_json).contains("profile"));

  Json spec = Matrix();
  spec["profile"] = true;
  auto asked = Expand(spec);
  ASSERT_TRUE(asked.ok()) << asked.status();
  EXPECT_TRUE(asked->profile);
  EXPECT_EQ(Json::parse(asked->normalized_json)["profile"], true);
  EXPECT_NE(asked->spec_hash, plain->spec_hash);
  spec["profile"] = false;
  EXPECT_EQ(Expand(spec)->spec_hash, plain->spec_hash);

  spec = Matrix();
  spec["prompt_tags"] = {"ptxb-no-hint", "ptxb-profile"};
  auto tagged = Expand(spec);
  ASSERT_TRUE(tagged.ok()) << tagged.status();
  EXPECT_TRUE(tagged->profile);

  spec["eval"] = "compile-only";
  ExpectInvalid(Expand(spec),
                "spec.json: $.eval: expected full, found compile-only; prompt tag 'ptxb-profile' "
                "(profile feedback) needs the kernel run on a GPU");
  spec = Matrix();
  spec["eval"] = "compile-only";
  spec["profile"] = true;
  ExpectInvalid(Expand(spec),
                "spec.json: $.eval: expected full, found compile-only; \"profile\": true needs "
                "the kernel run on a GPU");
  spec["profile"] = "yes";
  ExpectInvalid(Expand(spec), "spec.json: $.profile: expected true or false, found \"yes\"");
}

TEST_F(SpecTest, NameFromTheCommandLineOverridesTheSpec) {
  SpecInput input;
  input.text = Matrix().dump();
  input.path = "spec.json";
  input.name = "override.2";
  auto e = ExpandSpec(input, *definitions_, *prompts_, {});
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->name, "override.2");
  EXPECT_EQ(e->experiment_id, DeriveExperimentId("override.2"));
  EXPECT_EQ(Json::parse(e->normalized_json)["name"], "override.2");
}

TEST_F(SpecTest, ModelAndDefinitionFromTheCommandLineReplaceTheMatrixLists) {
  SpecInput input;
  input.text = Matrix().dump();
  input.path = "spec.json";
  input.default_model = "gpt-4.1";
  input.default_definition = "mha_with_lse_d128";
  auto e = ExpandSpec(input, *definitions_, *prompts_, {});
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->trajectories.size(), 6u);  // 1 model x 1 definition x 2 tags x 3 samples
  for (const TrajectorySpec& t : e->trajectories) {
    EXPECT_EQ(t.model, "gpt-4.1");
    EXPECT_EQ(t.definition, "mha_with_lse_d128");
  }
  auto base = Expand(Matrix());
  ASSERT_TRUE(base.ok());
  EXPECT_NE(e->spec_hash, base->spec_hash);
  EXPECT_EQ(e->eval_mode, ptxbench::v1::FULL);
  input.eval = "compile-only";
  auto compile_only = ExpandSpec(input, *definitions_, *prompts_, {});
  ASSERT_TRUE(compile_only.ok()) << compile_only.status();
  EXPECT_EQ(compile_only->eval_mode, ptxbench::v1::COMPILE_ONLY);
  input.eval = "fast";
  EXPECT_EQ(ExpandSpec(input, *definitions_, *prompts_, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  input.eval = "";
  input.default_definition = "no_such_definition";
  EXPECT_EQ(ExpandSpec(input, *definitions_, *prompts_, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(SpecTest, ExpansionIsDeterministic) {
  auto first = Expand(Matrix());
  auto second = Expand(Matrix());
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(Serialize(*first), Serialize(*second));
}

TEST_F(SpecTest, SameSpecWrittenDifferentlyHasTheSameHash) {
  auto base = Expand(Matrix());
  ASSERT_TRUE(base.ok()) << base.status();
  // Other key order, whitespace, 2 written as 2.0, defaults spelled out.
  const std::string rewritten = R"({"target_speedup": 1.50, "num_turns": 10,
      "samples": 3, "prompt_tags": ["ptxb-no-hint", "ptxb-expert"],
      "definitions": ["gemm_n7168_k5120", "mha_with_lse_d128"],
      "models": ["gpt-5", "anthropic/claude-opus-4.1"], "name": "sweep-1",
      "language": "cuda", "context_policy": "full", "eval": "full", "priority": 1,
      "max_cost_usd": 0})";
  auto same = Expand(rewritten);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(same->normalized_json, base->normalized_json);
  EXPECT_EQ(same->spec_hash, base->spec_hash);
  EXPECT_EQ(Serialize(*same), Serialize(*base));
}

TEST_F(SpecTest, AnyChangeThatAffectsExpansionChangesTheHash) {
  auto base = Expand(Matrix());
  ASSERT_TRUE(base.ok()) << base.status();
  std::vector<std::pair<std::string, Json>> changes = {
      {"name", "sweep-2"},
      {"models", {"anthropic/claude-opus-4.1", "gpt-5"}},
      {"definitions", {"gemm_n7168_k5120"}},
      {"prompt_tags", {"ptxb-expert", "ptxb-no-hint"}},
      {"samples", 4},
      {"num_turns", 11},
      {"target_speedup", 1.25},
      {"context_policy", "single-user"},
      {"language", "ptx"},
      {"priority", 2},
      {"eval", "compile-only"},
      {"max_cost_usd", 1.0},
      {"architectures", {"hopper", "blackwell"}}};
  std::set<std::string> hashes = {base->spec_hash};
  for (const auto& [field, value] : changes) {
    Json spec = Matrix();
    spec[field] = value;
    auto changed = Expand(spec);
    ASSERT_TRUE(changed.ok()) << field << ": " << changed.status();
    EXPECT_TRUE(hashes.insert(changed->spec_hash).second) << field;
  }
}

TEST_F(SpecTest, DerivedIdsFollowTheDocumentedRecipe) {
  EXPECT_EQ(DeriveExperimentId("sweep-1"),
            "exp_" + Sha256Hex(std::string("experiment\0sweep-1", 18)).substr(0, 16));
  constexpr char kJoined[] =
      "exp_0123\0gpt-5\0gemm\0ptxb-basic\0"
      "12";
  EXPECT_EQ(DeriveTrajectoryId("exp_0123", "gpt-5", "gemm", "ptxb-basic", 12),
            "tr_" + Sha256Hex(std::string(kJoined, sizeof(kJoined) - 1)).substr(0, 20));
  EXPECT_EQ(DeriveExperimentId("a").size(), 4u + 16u);
  EXPECT_EQ(DeriveTrajectoryId("e", "m", "d", "t", 0).size(), 3u + 20u);
  EXPECT_NE(DeriveTrajectoryId("e", "m", "d", "t", 0),
            DeriveTrajectoryId("e", "m", "d", "t", 1));
  // The separator keeps ("ab", "c") and ("a", "bc") apart.
  EXPECT_NE(DeriveTrajectoryId("e", "ab", "c", "t", 0),
            DeriveTrajectoryId("e", "a", "bc", "t", 0));
}

// ---- Matrix form: validation, one problem per test. ----

TEST_F(SpecTest, MalformedJsonGivesLineAndColumn) {
  auto e = Expand(std::string("{\n  \"name\": \"x\",\n  \"samples\": 3,,\n}"));
  ASSERT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(e.status().message()),
              StartsWith("spec.json: line 3, column 16: malformed JSON: "));
}

TEST_F(SpecTest, RejectsDocumentThatIsNeitherObjectNorList) {
  ExpectInvalid(
      Expand(std::string("42")),
      "spec.json: $: expected an object (matrix spec) or a list (PTXBench config), found 42");
}

TEST_F(SpecTest, RejectsUnknownField) {
  Json spec = Matrix();
  spec["smaples"] = 3;
  auto e = Expand(spec);
  ASSERT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(e.status().message()),
              StartsWith("spec.json: $.smaples: expected a known key (name, models,"));
  EXPECT_THAT(std::string(e.status().message()), EndsWith("), found an unknown key"));
}

TEST_F(SpecTest, RejectsDuplicateKey) {
  auto e = Expand(std::string(R"({"samples": 3, "samples": 4})"));
  ExpectInvalid(e,
                "spec.json: $.samples: expected each key once per object, found 4; the key is "
                "given more than once");
}

TEST_F(SpecTest, RejectsMissingName) {
  Json spec = Matrix();
  spec.erase("name");
  ExpectInvalid(Expand(spec),
                "spec.json: $.name: expected a value (the key is required), found nothing");
}

TEST_F(SpecTest, RejectsBadName) {
  Json spec = Matrix();
  spec["name"] = "my sweep!";
  ExpectInvalid(Expand(spec),
                "spec.json: $.name: expected a name of [A-Za-z0-9._-]{1,100}, found \"my sweep!\"");
  spec["name"] = std::string(101, 'a');
  EXPECT_EQ(Expand(spec).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(SpecTest, RejectsBadNameOverride) {
  SpecInput input;
  input.text = Matrix().dump();
  input.path = "spec.json";
  input.name = "a/b";
  ExpectInvalid(
      ExpandSpec(input, *definitions_, *prompts_, {}),
      "spec.json: $.name: expected a name of [A-Za-z0-9._-]{1,100}, found \"a/b\"; given on "
      "the command line");
}

TEST_F(SpecTest, RejectsEmptyModels) {
  Json spec = Matrix();
  spec["models"] = Json::array();
  ExpectInvalid(Expand(spec),
                "spec.json: $.models: expected a non-empty list of strings, found []");
}

TEST_F(SpecTest, RejectsUnknownArchitecture) {
  Json spec = Matrix();
  spec["architectures"] = {"hopper", "volta-next"};
  ExpectInvalid(Expand(spec),
                "spec.json: $.architectures: expected a non-empty list of GPU families or "
                "architectures, found [\"hopper\",\"volta-next\"]; 'volta-next' is neither a "
                "family (ampere, ada, hopper, blackwell) nor a GPU architecture sm_NN of compute "
                "capability 7.0 or newer (e.g. sm_90)");
  spec["architectures"] = Json::array();
  ExpectInvalid(Expand(spec),
                "spec.json: $.architectures: expected a non-empty list of GPU families or "
                "architectures, found []");
}

TEST_F(SpecTest, RejectsModelsThatAreNotAList) {
  Json spec = Matrix();
  spec["models"] = "gpt-5";
  ExpectInvalid(Expand(spec),
                "spec.json: $.models: expected a non-empty list of strings, found \"gpt-5\"");
}

TEST_F(SpecTest, RejectsBadModelName) {
  Json spec = Matrix();
  spec["models"] = {"gpt-5", "bad model"};
  ExpectInvalid(Expand(spec),
                "spec.json: $.models[1]: expected a model name of [A-Za-z0-9._:/@+-]{1,128}, "
                "found \"bad model\"");
}

TEST_F(SpecTest, RejectsDuplicateModel) {
  Json spec = Matrix();
  spec["models"] = {"gpt-5", "o3", "gpt-5"};
  ExpectInvalid(Expand(spec),
                "spec.json: $.models[2]: expected each entry once, found \"gpt-5\"; it repeats "
                "$.models[0]");
}

TEST_F(SpecTest, RejectsDuplicateDefinition) {
  Json spec = Matrix();
  spec["definitions"] = {"mha_bwd_d128", "mha_bwd_d128"};
  ExpectInvalid(Expand(spec),
                "spec.json: $.definitions[1]: expected each entry once, found \"mha_bwd_d128\"; "
                "it repeats $.definitions[0]");
}

TEST_F(SpecTest, RejectsDuplicatePromptTag) {
  Json spec = Matrix();
  spec["prompt_tags"] = {"ptxb-basic", "ptxb-basic"};
  ExpectInvalid(Expand(spec),
                "spec.json: $.prompt_tags[1]: expected each entry once, found \"ptxb-basic\"; "
                "it repeats $.prompt_tags[0]");
}

TEST_F(SpecTest, RejectsUnknownDefinitionWithTheRegistryMessage) {
  Json spec = Matrix();
  spec["definitions"] = {"gemm_n7168_k5120", "gemm_typo"};
  auto e = Expand(spec);
  ExpectInvalid(e, absl::StrCat("spec.json: $.definitions[1]: expected a known definition, found "
                                "\"gemm_typo\"; ",
                                definitions_->Find("gemm_typo").status().message()));
  EXPECT_THAT(std::string(e.status().message()),
              HasSubstr("unknown definition 'gemm_typo' (known: gemm_n7168_k5120,"));
}

TEST_F(SpecTest, RejectsUnknownPromptTagWithTheRegistryMessage) {
  Json spec = Matrix();
  spec["prompt_tags"] = {"hopper-typo"};
  auto e = Expand(spec);
  ExpectInvalid(e, absl::StrCat("spec.json: $.prompt_tags[0]: expected a known prompt tag, found "
                                "\"hopper-typo\"; ",
                                prompts_->Check("hopper-typo").message()));
  EXPECT_THAT(std::string(e.status().message()),
              HasSubstr("unknown prompt tag 'hopper-typo'"));
}

TEST_F(SpecTest, RejectsZeroSamples) {
  Json spec = Matrix();
  spec["samples"] = 0;
  ExpectInvalid(Expand(spec),
                "spec.json: $.samples: expected an integer from 1 to 2147483647, found 0");
}

TEST_F(SpecTest, RejectsNegativeSamples) {
  Json spec = Matrix();
  spec["samples"] = -2;
  ExpectInvalid(Expand(spec),
                "spec.json: $.samples: expected an integer from 1 to 2147483647, found -2");
}

TEST_F(SpecTest, RejectsNonIntegerSamples) {
  Json spec = Matrix();
  spec["samples"] = 2.5;
  ExpectInvalid(Expand(spec),
                "spec.json: $.samples: expected an integer from 1 to 2147483647, found 2.5");
  spec["samples"] = "3";
  ExpectInvalid(Expand(spec),
                "spec.json: $.samples: expected an integer from 1 to 2147483647, found \"3\"");
}

TEST_F(SpecTest, RejectsMissingSamples) {
  Json spec = Matrix();
  spec.erase("samples");
  ExpectInvalid(Expand(spec),
                "spec.json: $.samples: expected a value (the key is required), found nothing");
}

TEST_F(SpecTest, RejectsZeroTurns) {
  Json spec = Matrix();
  spec["num_turns"] = 0;
  ExpectInvalid(Expand(spec),
                "spec.json: $.num_turns: expected an integer from 1 to 1000, found 0");
}

TEST_F(SpecTest, RejectsMoreThanAThousandTurns) {
  Json spec = Matrix();
  spec["num_turns"] = 1000;
  EXPECT_TRUE(Expand(spec).ok());
  spec["num_turns"] = 1001;
  ExpectInvalid(Expand(spec),
                "spec.json: $.num_turns: expected an integer from 1 to 1000, found 1001");
}

TEST_F(SpecTest, RejectsNonPositiveTargetSpeedup) {
  Json spec = Matrix();
  spec["target_speedup"] = 0;
  ExpectInvalid(Expand(spec),
                "spec.json: $.target_speedup: expected a number greater than 0, found 0");
  spec["target_speedup"] = -1.5;
  ExpectInvalid(Expand(spec),
                "spec.json: $.target_speedup: expected a number greater than 0, found -1.5");
  spec["target_speedup"] = "fast";
  ExpectInvalid(Expand(spec), "spec.json: $.target_speedup: expected a number, found \"fast\"");
}

TEST_F(SpecTest, RejectsBadLanguage) {
  Json spec = Matrix();
  spec["language"] = "tilelang";
  ExpectInvalid(Expand(spec),
                "spec.json: $.language: expected one of \"cuda\", \"ptx\", \"solution\", "
                "\"triton\", found \"tilelang\"");
  spec["language"] = "solution";  // a FlashInfer-Trace solution JSON per answer
  auto e = Expand(spec);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->language, "solution");
}

// A Triton experiment takes Triton tags only, and a CUDA one none of them:
// a prompt that teaches one language while the answers are extracted and
// evaluated as another would fail every turn.
TEST_F(SpecTest, TritonExperimentsTakeTritonTagsOnly) {
  Json spec = Matrix();
  spec["language"] = "triton";
  ExpectInvalid(Expand(spec),
                "spec.json: $.prompt_tags[0]: expected a tag for triton kernels ptxbench "
                "evaluates on these GPUs, found \"ptxb-no-hint\"; prompt tag 'ptxb-no-hint' "
                "asks for CUDA or PTX kernels and the experiment's language is triton: use a "
                "Triton tag (ptxb-triton, or a hub's triton-*) or another language");
  spec["prompt_tags"] = {"ptxb-triton"};
  auto e = Expand(spec);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->language, "triton");
  EXPECT_EQ(e->trajectories.size(), 2u * 2u * 3u);
  spec["mode"] = "agent";  // agent mode too
  spec["agent"] = {{"cli", "codex"}, {"cli_version", "0.171.0"}, {"token_budget", 500000}};
  spec.erase("num_turns");
  auto agent = Expand(spec);
  ASSERT_TRUE(agent.ok()) << agent.status();
  EXPECT_EQ(agent->language, "triton");
  EXPECT_TRUE(agent->agent.has_value());
  spec = Matrix();
  spec["prompt_tags"] = {"ptxb-triton"};
  ExpectInvalid(Expand(spec),
                "spec.json: $.prompt_tags[0]: expected a tag for cuda kernels ptxbench "
                "evaluates on these GPUs, found \"ptxb-triton\"; prompt tag 'ptxb-triton' asks "
                "for Triton kernels and the experiment's language is cuda: set \"language\": "
                "\"triton\" in the experiment to use it");
}

TEST_F(SpecTest, RejectsBadContextPolicy) {
  Json spec = Matrix();
  spec["context_policy"] = "latest";
  ExpectInvalid(Expand(spec),
                "spec.json: $.context_policy: expected one of \"full\", \"latest-pair\", "
                "\"single-user\", found \"latest\"");
}

TEST_F(SpecTest, RejectsBadEvalMode) {
  Json spec = Matrix();
  spec["eval"] = "none";
  ExpectInvalid(Expand(spec),
                "spec.json: $.eval: expected one of \"full\", \"compile-only\", found \"none\"");
}

TEST_F(SpecTest, RejectsZeroPriority) {
  Json spec = Matrix();
  spec["priority"] = 0;
  ExpectInvalid(Expand(spec),
                "spec.json: $.priority: expected an integer from 1 to 2147483647, found 0");
}

TEST_F(SpecTest, RejectsNegativeCostLimit) {
  Json spec = Matrix();
  spec["max_cost_usd"] = -1;
  ExpectInvalid(Expand(spec),
                "spec.json: $.max_cost_usd: expected a number of at least 0 (0 = no limit), "
                "found -1");
}

TEST_F(SpecTest, MatrixAtTheLimitIsAcceptedAndAboveIsRefused) {
  SpecLimits limits;
  limits.max_trajectories = 24;
  auto at_limit = Expand(Matrix(), limits);
  ASSERT_TRUE(at_limit.ok()) << at_limit.status();
  EXPECT_EQ(at_limit->trajectories.size(), 24u);
  Json spec = Matrix();
  spec["samples"] = 4;
  ExpectInvalid(
      Expand(spec, limits),
      "spec.json: $.samples: expected at most 24 trajectories in all, found 4; 2 models x 2 "
      "definitions x 2 prompt tags x 4 samples = 32 trajectories");
}

TEST_F(SpecTest, DefaultLimitRefusesAHugeMatrix) {
  Json spec = Matrix();
  spec["samples"] = 2000000000;
  auto e = Expand(spec);
  ASSERT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(e.status().message()),
              HasSubstr("expected at most 100000 trajectories in all, found 2000000000; "));
  EXPECT_THAT(std::string(e.status().message()), HasSubstr("= 16000000000 trajectories"));
}

// ---- PTXBench list form. ----

class SpecListTest : public SpecTest {
 protected:
  static absl::StatusOr<ExpandedExperiment> ExpandList(
      const Json& list, const std::string& path = "cfg.json",
      const std::string& definition = "gemm_n7168_k5120",
      const std::string& model = "gpt-5", SpecLimits limits = {}) {
    SpecInput input;
    input.text = list.dump(2);
    input.path = path;
    input.default_definition = definition;
    input.default_model = model;
    return ExpandSpec(input, *definitions_, *prompts_, limits);
  }
  static Json List() {
    return Json::parse(R"([
      {"num_trajectories": 2, "num_turns": 5, "target_speedup": 1.0,
       "prompt_tag": "ptxb-no-hint", "_note": "baseline"},
      {"num_trajectories": 3, "num_turns": 20, "target_speedup": 2.0,
       "prompt_tag": "ptxb-expert", "definition": "mha_bwd_d128"}])");
  }
};

TEST_F(SpecListTest, ItemsOwnConsecutiveSampleIndicesInFileOrder) {
  auto e = ExpandList(List());
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->trajectories.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    const TrajectorySpec& t = e->trajectories[i];
    EXPECT_EQ(t.sample_index, i);
    EXPECT_EQ(t.model, "gpt-5");
    const bool first = i < 2;
    EXPECT_EQ(t.definition, first ? "gemm_n7168_k5120" : "mha_bwd_d128");
    EXPECT_EQ(t.prompt_tag, first ? "ptxb-no-hint" : "ptxb-expert");
    EXPECT_EQ(t.num_turns, first ? 5 : 20);
    EXPECT_DOUBLE_EQ(t.target_speedup, first ? 1.0 : 2.0);
    EXPECT_EQ(t.trajectory_id, DeriveTrajectoryId(e->experiment_id, "gpt-5", t.definition,
                                                  t.prompt_tag, i));
  }
}

TEST_F(SpecListTest, NameComesFromTheFileOrTheCommandLine) {
  auto from_file = ExpandList(List(), "/configs/h100_sweep.json");
  ASSERT_TRUE(from_file.ok()) << from_file.status();
  EXPECT_EQ(from_file->name, "h100_sweep");
  EXPECT_EQ(from_file->experiment_id, DeriveExperimentId("h100_sweep"));

  SpecInput input;
  input.text = List().dump();
  input.path = "<stdin>";
  input.default_model = "gpt-5";
  input.default_definition = "gemm_n7168_k5120";
  ExpectInvalid(
      ExpandSpec(input, *definitions_, *prompts_, {}),
      "<stdin>: $.name: expected a name of [A-Za-z0-9._-]{1,100}, found \"<stdin>\"; a "
      "list-form spec takes its name from the command line (--name) or else from its file "
      "name");
  input.name = "piped";
  auto named = ExpandSpec(input, *definitions_, *prompts_, {});
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_EQ(named->name, "piped");
}

// The memcheck gate (docs/FORMATS.md): PTXBench's protocol, but off by
// default until ptxbench's gate has run on a GPU machine; the object form of
// the list config turns it on; never in a compile-only run.
TEST_F(SpecListTest, PTXBenchsListConfigTurnsTheMemcheckGateOn) {
  auto e = ExpandList(List());
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_FALSE(e->memcheck);
  EXPECT_FALSE(Json::parse(e->normalized_json).contains("memcheck"));
  EXPECT_FALSE(NormalizedSpecAsksMemcheck(e->normalized_json));

  Json object = {{"name", "gate"}, {"items", List()}, {"memcheck", true}};
  auto on = ExpandList(object);
  ASSERT_TRUE(on.ok()) << on.status();
  EXPECT_TRUE(on->memcheck);
  EXPECT_EQ(Json::parse(on->normalized_json)["memcheck"], true);
  EXPECT_TRUE(NormalizedSpecAsksMemcheck(on->normalized_json));
  object["memcheck"] = "no";
  ExpectInvalid(ExpandList(object),
                "cfg.json: $.memcheck: expected true or false, found \"no\"");
}

TEST_F(SpecListTest, NormalizedJsonRecordsTheCommandLineDefaults) {
  auto e = ExpandList(List());
  ASSERT_TRUE(e.ok()) << e.status();
  Json normalized = Json::parse(e->normalized_json);
  EXPECT_EQ(normalized["form"], "list");
  EXPECT_EQ(normalized["model"], "gpt-5");
  EXPECT_EQ(normalized["items"][0]["definition"], "gemm_n7168_k5120");
  EXPECT_FALSE(normalized["items"][0].contains("_note"));
  EXPECT_EQ(normalized["language"], "cuda");
  EXPECT_EQ(normalized["priority"], 1);

  auto other_model = ExpandList(List(), "cfg.json", "gemm_n7168_k5120", "o3");
  auto other_definition = ExpandList(List(), "cfg.json", "mha_with_lse_d128");
  ASSERT_TRUE(other_model.ok() && other_definition.ok());
  EXPECT_NE(other_model->spec_hash, e->spec_hash);
  EXPECT_NE(other_definition->spec_hash, e->spec_hash);
}

// PTXBench times the one workload its test script names; so does ptxbench,
// or the speedups would not compare.
constexpr char kM8192[] = "242ddd1a-ee21-5a9c-b2f7-9867cc517890";

absl::StatusOr<ExpandedExperiment> ExpandWithScript(const Json& list, const std::string& script,
                                                    const workloads::DefinitionRegistry& d,
                                                    const PromptRegistry& p) {
  SpecInput input;
  input.text = list.dump();
  input.path = "cfg.json";
  input.default_definition = "gemm_n7168_k5120";
  input.default_model = "gpt-5";
  if (!script.empty()) input.files["tests/gemm_8192.py"] = script;
  return ExpandSpec(input, d, p, {});
}

std::string Script(const std::string& definition, const std::string& uuid) {
  return absl::StrCat("import json\n\nDEFINITION_NAME = \"", definition, "\"\nWORKLOAD_UUID = '",
                      uuid, "'\n\ndef main():\n    pass\n");
}

TEST_F(SpecListTest, ATestPathHoldsItsTrajectoriesToTheWorkloadItsScriptNames) {
  Json list = List();
  list[0]["test_path"] = "tests/gemm_8192.py";
  auto e = ExpandWithScript(list, Script("gemm_n7168_k5120", kM8192), *definitions_, *prompts_);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_THAT(e->trajectories[0].workloads, ElementsAre(kM8192));
  EXPECT_THAT(e->trajectories[1].workloads, ElementsAre(kM8192));
  EXPECT_TRUE(e->trajectories[2].workloads.empty());  // the item without one: all
  Json normalized = Json::parse(e->normalized_json);
  EXPECT_EQ(normalized["items"][0]["test_path"], "tests/gemm_8192.py");
  EXPECT_EQ(normalized["items"][0]["workloads"], Json::array({kM8192}));
  auto without = ExpandList(List());
  ASSERT_TRUE(without.ok());
  EXPECT_NE(without->spec_hash, e->spec_hash);
}

TEST_F(SpecListTest, ATestScriptThatDoesNotFitIsRefusedNamingTheField) {
  Json list = List();
  list[0]["test_path"] = "tests/gemm_8192.py";
  const std::string field = "cfg.json: $[0].test_path: expected ";
  const std::string script =
      "a test script of a workload of gemm_n7168_k5120, found "
      "\"tests/gemm_8192.py\"; ";
  ExpectInvalid(ExpandWithScript(list, "", *definitions_, *prompts_),
                field +
                    "a file sent with the spec, found \"tests/gemm_8192.py\"; ptxbench "
                    "submit reads it, relative to the spec's folder");
  ExpectInvalid(ExpandWithScript(list, "print('hi')\n", *definitions_, *prompts_),
                field + script + "the script names no workload (no WORKLOAD_UUID = \"...\" line)");
  ExpectInvalid(ExpandWithScript(list, Script("mha_bwd_d128", kM8192), *definitions_, *prompts_),
                field + script + "the script is for definition 'mha_bwd_d128'");
  ExpectInvalid(
      ExpandWithScript(list, Script("gemm_n7168_k5120", "nope"), *definitions_, *prompts_),
      field + script + "the script's workload nope is not one");
}

// A fix-it item: each trajectory starts from the broken kernel and its log.
TEST_F(SpecListTest, AFixItItemCarriesItsKernelAndLog) {
  Json list = List();
  list[0]["error_kernel_path"] = "broken/k.cu";
  list[0]["error_log_path"] = "broken/k.log";
  SpecInput input;
  input.text = list.dump();
  input.path = "cfg.json";
  input.default_definition = "gemm_n7168_k5120";
  input.default_model = "gpt-5";
  input.files = {{"broken/k.cu", "__global__ void k() {}"}, {"broken/k.log", "illegal address"}};
  auto e = ExpandSpec(input, *definitions_, *prompts_, {});
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->trajectories[0].repair_kernel, "__global__ void k() {}");
  EXPECT_EQ(e->trajectories[1].repair_log, "illegal address");
  EXPECT_TRUE(e->trajectories[2].repair_kernel.empty());
  // Part of what makes its task prompt its own (rendered_prompts.h, TaskPromptKey).
  EXPECT_NE(e->trajectories[0].repair_sha256, e->trajectories[2].repair_sha256);
  // Other contents at the same paths: another experiment.
  input.files["broken/k.log"] = "out of bounds";
  auto other = ExpandSpec(input, *definitions_, *prompts_, {});
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->spec_hash, e->spec_hash);

  list[0].erase("error_log_path");
  input.text = list.dump();
  ExpectInvalid(ExpandSpec(input, *definitions_, *prompts_, {}),
                "cfg.json: $[0].error_kernel_path: expected both error_kernel_path and "
                "error_log_path, found \"broken/k.cu\"; a fix-it item needs the kernel and its "
                "error log");
}

// The object form of a list spec: the same items (and, in multiturn, the
// same hash as the array), or in agent mode each item a session that starts
// from its fix-it kernel (starter fixit); what does not fit is refused.
TEST_F(SpecListTest, TheObjectFormRunsItsItemsAsAgentSessions) {
  Json items = List();
  items[0]["error_kernel_path"] = "broken/k.cu";
  items[0]["error_log_path"] = "broken/k.log";
  items[1]["error_kernel_path"] = "broken/k.cu";
  items[1]["error_log_path"] = "broken/k.log";
  SpecInput input;
  input.path = "cfg.json";
  input.default_definition = "gemm_n7168_k5120";
  input.default_model = "gpt-5";
  input.files = {{"broken/k.cu", "__global__ void k() {}"}, {"broken/k.log", "illegal address"}};
  input.text = items.dump();
  auto as_array = ExpandSpec(input, *definitions_, *prompts_, {});
  ASSERT_TRUE(as_array.ok()) << as_array.status();
  input.text = Json{{"items", items}}.dump();
  auto as_object = ExpandSpec(input, *definitions_, *prompts_, {});
  ASSERT_TRUE(as_object.ok()) << as_object.status();
  EXPECT_EQ(as_object->spec_hash, as_array->spec_hash) << "the same experiment";

  Json agent_items = items;
  for (Json& item : agent_items) item.erase("num_turns");
  Json spec = {{"name", "fix-agent"},
               {"mode", "agent"},
               {"agent", {{"cli", "codex"}, {"cli_version", agents::FindAgentCli("codex")->version},
                          {"token_budget", 50000}, {"max_evaluations", 4},
                          {"starter", "fixit"}}},
               {"items", agent_items}};
  input.text = spec.dump();
  auto agent = ExpandSpec(input, *definitions_, *prompts_, {});
  ASSERT_TRUE(agent.ok()) << agent.status();
  EXPECT_EQ(agent->name, "fix-agent");
  ASSERT_TRUE(agent->agent.has_value());
  EXPECT_EQ(agent->agent->starter, "fixit");
  ASSERT_EQ(agent->trajectories.size(), 5u);
  EXPECT_EQ(agent->trajectories[4].num_turns, 4) << "a session's evaluations";
  EXPECT_EQ(agent->trajectories[4].repair_log, "illegal address");
  EXPECT_EQ(Json::parse(agent->normalized_json)["agent"]["starter"], "fixit");

  const std::pair<std::function<void(Json&)>, std::string> refused[] = {
      {[](Json& j) { j["items"][1]["num_turns"] = 3; },
       "cfg.json: $.items[1].num_turns: expected no num_turns in agent mode, found 3; a "
       "session's evaluations are limited by agent.max_evaluations"},
      {[](Json& j) {
         j["items"][1].erase("error_kernel_path");
         j["items"][1].erase("error_log_path");
       },
       "cfg.json: $.items[1].error_kernel_path: expected a fix-it item's kernel and log "
       "(agent.starter is fixit: each session starts from one), found nothing"},
      {[](Json& j) { j["items"] = Json::array(); },
       "cfg.json: $.items: expected a non-empty list of experiments, found []"},
      {[](Json& j) { j["architectures"] = {"hopper"}; },
       "cfg.json: $.architectures: expected a known key (name, items, mode, agent, "
       "context_policy, language, eval, priority, max_cost_usd, profile, memcheck, held_out_workloads; keys starting with '_' "
       "are comments), found an unknown key"},
  };
  for (const auto& [mutate, error] : refused) {
    Json bad = spec;
    mutate(bad);
    input.text = bad.dump();
    ExpectInvalid(ExpandSpec(input, *definitions_, *prompts_, {}), error);
  }
}

TEST(RepairPromptTest, CarriesTheKernelAndTheLogInFencesTheyCannotClose) {
  const std::string p =
      PromptRegistry::RenderRepairPrompt("int x; // ```\n", "error: ```` here", "cuda");
  EXPECT_NE(p.find("smallest change"), std::string::npos);
  EXPECT_NE(p.find("````cpp\nint x; // ```\n````"), std::string::npos) << p;
  EXPECT_NE(p.find("`````text\nerror: ```` here\n`````"), std::string::npos) << p;
}

// PTXBench's plan.json: one entry per trajectory, exp_index in order.
TEST_F(SpecListTest, APlanJsonRunsAsTheConfigItRecords) {
  Json entry = {{"num_trajectories", 2}, {"num_turns", 3}, {"target_speedup", 1.0},
                {"prompt_tag", "ptxb-no-hint"}, {"definition", "gemm_n7168_k5120"},
                {"test_path", "tests/gemm_8192.py"}, {"config", "/runs/sweep.json"}};
  Json plan = {{"config", "/runs/sweep.json"}, {"plan", Json::array()}};
  for (int i = 0; i < 2; ++i) {
    entry["exp_index"] = i;
    plan["plan"].push_back(entry);
  }
  auto e = ExpandWithScript(plan, Script("gemm_n7168_k5120", kM8192), *definitions_, *prompts_);
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->trajectories.size(), 2u);
  for (const TrajectorySpec& t : e->trajectories) {
    EXPECT_EQ(t.num_turns, 3);
    EXPECT_THAT(t.workloads, ElementsAre(kM8192));
  }
  plan["plan"][1]["exp_index"] = 5;
  ExpectInvalid(
      ExpandWithScript(plan, Script("gemm_n7168_k5120", kM8192), *definitions_, *prompts_),
      "cfg.json: $.plan[1].exp_index: expected 1 (the entries are the experiments in "
      "order), found 5");
  plan["extra"] = 1;
  ExpectInvalid(ExpandWithScript(plan, "", *definitions_, *prompts_),
                "cfg.json: $.extra: expected a known key (config, plan; keys starting with '_' "
                "are comments), found an unknown key");
}

TEST_F(SpecListTest, UnderscoreKeysDoNotChangeTheHash) {
  Json with_notes = List();
  with_notes[1]["_internal"] = {{"anything", 1}};
  Json without = List();
  without[0].erase("_note");
  auto a = ExpandList(with_notes);
  auto b = ExpandList(without);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->spec_hash, b->spec_hash);
  EXPECT_EQ(Serialize(*a), Serialize(*b));
}

TEST_F(SpecListTest, ItemChangesChangeTheHash) {
  auto base = ExpandList(List());
  ASSERT_TRUE(base.ok());
  Json changed = List();
  changed[0]["num_trajectories"] = 3;
  EXPECT_NE(ExpandList(changed)->spec_hash, base->spec_hash);
  Json reordered = Json::array({List()[1], List()[0]});
  EXPECT_NE(ExpandList(reordered)->spec_hash, base->spec_hash);
}

TEST_F(SpecListTest, RejectsEmptyList) {
  ExpectInvalid(ExpandList(Json::array()),
                "cfg.json: $: expected a non-empty list of experiments, found []");
}

TEST_F(SpecListTest, RejectsItemThatIsNotAnObject) {
  ExpectInvalid(ExpandList(Json::array({List()[0], 7})),
                "cfg.json: $[1]: expected an object, found 7");
}

TEST_F(SpecListTest, RejectsUnknownItemField) {
  Json list = List();
  list[1]["num_trajectory"] = 1;
  auto e = ExpandList(list);
  ASSERT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(e.status().message()),
              StartsWith("cfg.json: $[1].num_trajectory: expected a known key (num_trajectories,"));
}

TEST_F(SpecListTest, RejectsRepairItemsWhoseFilesWereNotSent) {
  Json list = List();
  list[0]["error_kernel_path"] = "bad/kernel.cu";
  list[0]["error_log_path"] = "bad/log.txt";
  ExpectInvalid(ExpandList(list),
                "cfg.json: $[0].error_kernel_path: expected a file sent with the spec, found "
                "\"bad/kernel.cu\"; ptxbench submit reads it, relative to the spec's folder");
}

TEST_F(SpecListTest, RejectsZeroTrajectories) {
  Json list = List();
  list[1]["num_trajectories"] = 0;
  ExpectInvalid(ExpandList(list),
                "cfg.json: $[1].num_trajectories: expected an integer from 1 to 2147483647, "
                "found 0");
}

TEST_F(SpecListTest, RejectsFractionalTrajectories) {
  Json list = List();
  list[0]["num_trajectories"] = 1.5;
  ExpectInvalid(
      ExpandList(list),
      "cfg.json: $[0].num_trajectories: expected an integer from 1 to 2147483647, found 1.5");
}

TEST_F(SpecListTest, RejectsTooManyTurns) {
  Json list = List();
  list[0]["num_turns"] = 5000;
  ExpectInvalid(ExpandList(list),
                "cfg.json: $[0].num_turns: expected an integer from 1 to 1000, found 5000");
}

TEST_F(SpecListTest, RejectsNonPositiveTargetSpeedup) {
  Json list = List();
  list[1]["target_speedup"] = 0.0;
  ExpectInvalid(ExpandList(list),
                "cfg.json: $[1].target_speedup: expected a number greater than 0, found 0.0");
}

TEST_F(SpecListTest, RejectsMissingPromptTag) {
  Json list = List();
  list[0].erase("prompt_tag");
  ExpectInvalid(ExpandList(list),
                "cfg.json: $[0].prompt_tag: expected a value (the key is required), found nothing");
}

TEST_F(SpecListTest, RejectsUnknownPromptTag) {
  Json list = List();
  list[0]["prompt_tag"] = "hopper-nohint";
  auto e = ExpandList(list);
  ASSERT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(e.status().message()),
              StartsWith("cfg.json: $[0].prompt_tag: expected a known prompt tag, found "
                         "\"hopper-nohint\"; unknown prompt tag 'hopper-nohint' (known: "));
}

TEST_F(SpecListTest, RejectsUnknownItemDefinition) {
  Json list = List();
  list[1]["definition"] = "mha_bwd";
  auto e = ExpandList(list);
  ASSERT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(e.status().message()),
              StartsWith("cfg.json: $[1].definition: expected a known definition, found "
                         "\"mha_bwd\"; unknown definition 'mha_bwd' (known: "));
}

TEST_F(SpecListTest, RejectsUnknownDefaultDefinition) {
  auto e = ExpandList(List(), "cfg.json", "gemm_typo");
  ASSERT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(e.status().message()),
              StartsWith("cfg.json: $[0].definition: expected a known definition, found "
                         "\"gemm_typo\"; unknown definition 'gemm_typo'"));
}

TEST_F(SpecListTest, RejectsItemWithoutAnyDefinition) {
  ExpectInvalid(
      ExpandList(List(), "cfg.json", ""),
      "cfg.json: $[0].definition: expected a definition, in the item or on the command line "
      "(--definition), found nothing");
}

TEST_F(SpecListTest, RejectsMissingModel) {
  ExpectInvalid(ExpandList(List(), "cfg.json", "gemm_n7168_k5120", ""),
                "cfg.json: $.model: expected a model given on the command line (--model), found "
                "nothing; a list-form spec names no model of its own");
}

TEST_F(SpecListTest, RejectsBadModelName) {
  ExpectInvalid(ExpandList(List(), "cfg.json", "gemm_n7168_k5120", "gpt 5"),
                "cfg.json: $.model: expected a model name of [A-Za-z0-9._:/@+-]{1,128}, found "
                "\"gpt 5\"");
}

TEST_F(SpecListTest, TotalAboveTheLimitIsRefused) {
  SpecLimits limits;
  limits.max_trajectories = 4;
  ExpectInvalid(ExpandList(List(), "cfg.json", "gemm_n7168_k5120", "gpt-5", limits),
                "cfg.json: $[1].num_trajectories: expected at most 4 trajectories in all, found 3; "
                "num_trajectories summed over items [0] to [1] = 5 trajectories");
  limits.max_trajectories = 5;
  EXPECT_TRUE(ExpandList(List(), "cfg.json", "gemm_n7168_k5120", "gpt-5", limits).ok());
}

// A dataset of one definition and one workload line, in a fresh folder.
class SpecDatasetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::path(::testing::TempDir()) /
            absl::StrCat("spec_dataset_", getpid(),
                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ / "definitions");
    std::filesystem::create_directories(root_ / "workloads");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  // Expands a matrix spec of definition `name` of the dataset.
  absl::StatusOr<ExpandedExperiment> Expand(const Json& definition, const std::string& line,
                                            const std::string& eval = "full") {
    const std::string name = definition["name"];
    std::ofstream(root_ / "definitions" / (name + ".json")) << definition.dump();
    std::ofstream(root_ / "workloads" / (name + ".jsonl")) << line << "\n";
    auto definitions = workloads::DefinitionRegistry::Load({{root_.string()}});
    EXPECT_TRUE(definitions.ok()) << definitions.status();
    auto prompts = PromptRegistry::Load(PromptRegistry::BundledRoot());
    EXPECT_TRUE(prompts.ok());
    if (!definitions.ok() || !prompts.ok()) return absl::InternalError("no registry");
    SpecInput input;
    input.path = "spec.json";
    input.eval = eval;
    input.text = Json({{"name", "from-dataset"}, {"models", {"m"}}, {"definitions", {name}},
                       {"prompt_tags", {"ptxb-no-hint"}}, {"samples", 1}, {"num_turns", 1},
                       {"target_speedup", 1.0}})
                     .dump();
    return ExpandSpec(input, **definitions, **prompts, {});
  }

  static Json RmsNorm() {
    return Json::parse(*ReadFile(workloads::testing::RmsNormDataset() +
                                 "/definitions/rmsnorm/rmsnorm_h4096.json"));
  }
  // Its first workload (the weight drawn, no file).
  static std::string RmsNormLine() {
    const std::string lines = *ReadFile(workloads::testing::RmsNormDataset() +
                                        "/workloads/rmsnorm/rmsnorm_h4096.jsonl");
    return lines.substr(0, lines.find('\n') + 1);
  }

  std::filesystem::path root_;
};

TEST_F(SpecDatasetTest, AWorkloadWhoseInputsCannotBeMadeIsRefusedAtSubmit) {
  // A dataset whose workload takes A from a safetensors file it lacks:
  // refused with the reason, never run on random inputs instead.
  Json def = Json::parse(*ReadFile(workloads::DefinitionRegistry::BundledRoot() +
                                   "/definitions/gemm/gemm_n7168_k5120.json"));
  def["name"] = "gemm_from_file";
  auto e = Expand(def,
                  R"({"definition": "gemm_from_file", "solution": null, "workload": {"uuid": )"
                  R"("11111111-2222-3333-4444-555555555555", "axes": {"M": 64}, "inputs": {"A": )"
                  R"({"type": "safetensors", "path": "blob/a.safetensors", "tensor_key": "A"}, )"
                  R"("B": {"type": "random"}}}, "evaluation": null})");
  ASSERT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(e.status().message()),
              HasSubstr(absl::StrCat("workload 11111111-2222-3333-4444-555555555555, input A: ",
                                     (root_ / "blob/a.safetensors").string(), ": cannot be read")));
}

TEST_F(SpecDatasetTest, ADefinitionOnlyPyTorchComputesIsNotedForTheWorkerCheck) {
  auto full = Expand(RmsNorm(), RmsNormLine());
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_EQ(full->pytorch_references,
            (std::map<std::string, std::string>{
                {"rmsnorm_h4096", "definition rmsnorm_h4096 (op_type rmsnorm): this build has no "
                                  "native reference for it"}}));
  // Compile-only evaluation runs no reference.
  auto compile_only = Expand(RmsNorm(), RmsNormLine(), "compile-only");
  ASSERT_TRUE(compile_only.ok()) << compile_only.status();
  EXPECT_TRUE(compile_only->pytorch_references.empty());
}

TEST_F(SpecDatasetTest, ADefinitionWithNoReferenceAtAllIsRefusedForFullEvaluation) {
  Json def = RmsNorm();
  def["reference"] = "\n";  // the field is required, and may hold nothing else
  auto full = Expand(def, RmsNormLine());
  ASSERT_EQ(full.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(full.status().message()),
            "spec.json: definition rmsnorm_h4096 has no reference to evaluate against: no native "
            "reference fits (definition rmsnorm_h4096 (op_type rmsnorm): this build has no native "
            "reference for it) and its \"reference\" holds no PyTorch code");
  EXPECT_TRUE(Expand(def, RmsNormLine(), "compile-only").ok());
}

TEST_F(SpecTest, TheBundledDefinitionsNeedNoPyTorch) {
  auto e = Expand(Matrix());
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(e->pytorch_references.empty());
}

}  // namespace
}  // namespace ptxbench::experiment_spec
