#include "experiment_spec/one_off_eval.h"

#include <gtest/gtest.h>

#include <string>

#include "common/hash.h"
#include "experiment_spec/spec_test_fixture.h"

namespace ptxbench::experiment_spec {
namespace {

using OneOffEvalTest = SpecTest;

// The first tag of the kernel's language, as the one-off evaluation names.
std::string FirstTag(const prompts::PromptRegistry& prompts, const std::string& language) {
  for (const std::string& tag : prompts.Tags()) {
    if (prompts.IsTritonTag(tag) == (language == "triton")) return tag;
  }
  return "";
}

// The matrix spec a one-off evaluation stands for, as JSON text: what
// ClientService.SubmitEval wrote and expanded before the spec was built as
// a value.
SpecInput AsText(const OneOffEval& e, const std::string& name, const std::string& tag) {
  const std::string language = e.language.empty() ? "cuda" : e.language;
  SpecInput input;
  input.text = nlohmann::json{
      {"name", name},
      {"models", {"file"}},
      {"definitions", {e.definition}},
      {"prompt_tags", {tag}},
      {"samples", 1},
      {"num_turns", 1},
      {"target_speedup", e.target_speedup > 0 ? e.target_speedup : 1.0},
      {"language", language},
      {"eval", e.mode == ptxbench::v1::COMPILE_ONLY ? "compile-only" : "full"},
      {"priority", 10}}.dump();
  input.path = "<eval>";
  return input;
}

OneOffEval Eval(const std::string& language, double target, ptxbench::v1::EvalMode mode) {
  return {"gemm_n7168_k5120", language, "__global__ void k() {}\n", target, mode,
          absl::FromUnixMillis(1765000000123)};
}

// "eval-", 12 hex digits of the kernel's sha256, "-", the Unix milliseconds.
std::string NameOf(const OneOffEval& e) {
  return "eval-" + Sha256Hex(e.kernel_source).substr(0, 12) + "-1765000000123";
}

// Built as a value, it is the same experiment the JSON text made: id, name,
// normalized spec and hash, options, references, and its one trajectory.
TEST_F(OneOffEvalTest, IsTheExperimentItsMatrixSpecMakes) {
  for (const OneOffEval& e :
       {Eval("", 0, ptxbench::v1::FULL), Eval("triton", 1.7, ptxbench::v1::FULL),
        Eval("ptx", -1, ptxbench::v1::COMPILE_ONLY),
        Eval("cuda", 2.5, ptxbench::v1::COMPILE_ONLY)}) {
    absl::StatusOr<ExpandedExperiment> value = OneOffEvalSpec(e, *definitions_, *prompts_, {});
    ASSERT_TRUE(value.ok()) << value.status();
    const std::string name = NameOf(e);
    EXPECT_EQ(value->name, name);
    const std::string language = e.language.empty() ? "cuda" : e.language;
    absl::StatusOr<ExpandedExperiment> text =
        ExpandSpec(AsText(e, name, FirstTag(*prompts_, language)), *definitions_, *prompts_, {});
    ASSERT_TRUE(text.ok()) << text.status();
    EXPECT_EQ(Serialize(*value), Serialize(*text)) << language;
    EXPECT_EQ(value->architectures, text->architectures);
    EXPECT_EQ(value->profile, text->profile);
    EXPECT_EQ(value->memcheck, text->memcheck);
    EXPECT_EQ(value->pytorch_references, text->pytorch_references);
    ASSERT_EQ(value->trajectories.size(), 1u);
    EXPECT_EQ(value->trajectories[0].num_turns, 1);
    EXPECT_EQ(value->priority, kOneOffEvalPriority);
  }
}

// What a matrix spec refuses, the value refuses with the same message.
TEST_F(OneOffEvalTest, RefusesAsItsMatrixSpecWould) {
  OneOffEval unknown = Eval("cuda", 1, ptxbench::v1::FULL);
  unknown.definition = "no_such_definition";
  OneOffEval rust = Eval("rust", 1, ptxbench::v1::FULL);
  for (const OneOffEval& e : {unknown, rust}) {
    absl::StatusOr<ExpandedExperiment> value = OneOffEvalSpec(e, *definitions_, *prompts_, {});
    ASSERT_EQ(value.status().code(), absl::StatusCode::kInvalidArgument) << value.status();
    const std::string name = NameOf(e);
    absl::StatusOr<ExpandedExperiment> text =
        ExpandSpec(AsText(e, name, FirstTag(*prompts_, e.language)), *definitions_, *prompts_, {});
    EXPECT_EQ(value.status(), text.status());
  }
}

}  // namespace
}  // namespace ptxbench::experiment_spec
