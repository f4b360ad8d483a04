// The experiment specs bundled under examples/ parse and expand as the
// README runs them (`ptxbench up --submit examples/X.json`, a list config with
// `--model`), so an example broken by a change of the spec format fails here
// rather than in a user's first run. Every examples/*.json is listed below.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "common/data_dir.h"
#include "common/file.h"
#include "prompts/prompts.h"
#include "prompts/testing/hub_dir_test.h"
#include "experiment_spec/spec.h"
#include "workloads/registry.h"

namespace ptxbench::experiment_spec {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// How each bundled spec is submitted, and what it must expand to.
struct Example {
  std::string default_model;  // list configs: `--model`
  std::string default_definition;  // list configs: `--definition`
  std::vector<std::string> datasets;  // `--dataset`
  std::string language;
  size_t trajectories;
  std::string model;
  std::string prompt_tag;  // of the first trajectory
};

const std::map<std::string, Example>& Examples() {
  static const auto* examples = new std::map<std::string, Example>{
      {"quickstart.json",
       {"", "", {}, "cuda", 4, "quickstart-scripted", "ptxb-no-hint"}},
      {"quickstart_triton.json",
       {"", "", {}, "triton", 1, "quickstart-triton-scripted", "ptxb-triton"}},
      {"rmsnorm.json",
       {"", "", {"examples/flashinfer_trace"}, "cuda", 1, "rmsnorm-scripted",
        "ptxb-no-hint"}},
      {"ptxbench_list.json",
       {"m", "gemm_n7168_k5120", {}, "cuda", 4, "m", "ptxb-no-hint"}},
      {"ptxbench_triton.json",
       {"quickstart-triton-scripted", "", {}, "triton", 1, "quickstart-triton-scripted",
        "triton-hopper"}},
  };
  return *examples;
}

class BundledExamplesTest : public prompts::HubDirTest {
 protected:
  // PTXBench's hub is not bundled: a stand-in with its layout and its
  // triton-hopper tag (multiturn/prompts/hub.json and structural_doc/).
  void WriteStandInHub() {
    Write("prompts/hub.json", R"({"hopper-no-hint": ["structural_doc/document/k.md"],
        "triton-hopper": ["structural_doc/document/triton_knowledge_sm90_plus.md"]})");
    Write("structural_doc/document/k.md", "stand-in");
    Write("structural_doc/document/triton_knowledge_sm90_plus.md", "stand-in for Triton");
  }

  absl::StatusOr<ExpandedExperiment> Expand(const std::string& file, const Example& example,
                                            const PromptRegistry& prompts) {
    absl::StatusOr<std::string> text = ReadFile(DataDir() + "/examples/" + file);
    if (!text.ok()) return text.status();
    workloads::DatasetOptions options;
    for (const std::string& d : example.datasets) options.datasets.push_back(DataDir() + "/" + d);
    auto definitions = workloads::DefinitionRegistry::Load(options);
    if (!definitions.ok()) return definitions.status();
    SpecInput input;
    input.text = *text;
    input.path = file;
    input.default_model = example.default_model;
    input.default_definition = example.default_definition;
    return ExpandSpec(input, **definitions, prompts, {});
  }
};

TEST_F(BundledExamplesTest, EveryBundledSpecExpands) {
  WriteStandInHub();
  auto with_hub = Load("prompts/hub.json");
  ASSERT_TRUE(with_hub.ok()) << with_hub.status();
  std::set<std::string> found;
  for (const fs::directory_entry& e : fs::directory_iterator(DataDir() + "/examples")) {
    if (e.is_regular_file() && e.path().extension() == ".json") {
      found.insert(e.path().filename().string());
    }
  }
  for (const std::string& file : found) {
    EXPECT_TRUE(Examples().count(file)) << "examples/" << file << " has no case here";
  }
  for (const auto& [file, example] : Examples()) {
    SCOPED_TRACE(file);
    EXPECT_TRUE(found.count(file)) << "examples/" << file << " is gone";
    absl::StatusOr<ExpandedExperiment> e = Expand(file, example, **with_hub);
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_EQ(e->language, example.language);
    ASSERT_EQ(e->trajectories.size(), example.trajectories);
    EXPECT_EQ(e->trajectories[0].model, example.model);
    EXPECT_EQ(e->trajectories[0].prompt_tag, example.prompt_tag);
    EXPECT_EQ(e->trajectories[0].definition,
              file == "rmsnorm.json" ? "rmsnorm_h4096" : "gemm_n7168_k5120");
  }
}

// The two Triton examples are the same experiment but for the prompt: the
// matrix with ptxbench's own Triton tag, the PTXBench config with the hub's.
// Without the hub the config is refused, saying it needs one.
TEST_F(BundledExamplesTest, TheTritonExamplesRunTheSameTrajectoryShape) {
  WriteStandInHub();
  auto with_hub = Load("prompts/hub.json");
  ASSERT_TRUE(with_hub.ok()) << with_hub.status();
  auto matrix =
      Expand("quickstart_triton.json", Examples().at("quickstart_triton.json"), **with_hub);
  auto config = Expand("ptxbench_triton.json", Examples().at("ptxbench_triton.json"), **with_hub);
  ASSERT_TRUE(matrix.ok() && config.ok()) << matrix.status() << config.status();
  EXPECT_EQ(matrix->trajectories[0].num_turns, config->trajectories[0].num_turns);
  EXPECT_EQ(matrix->trajectories[0].target_speedup, config->trajectories[0].target_speedup);
  EXPECT_EQ(matrix->trajectories[0].model, config->trajectories[0].model);

  auto bundled = PromptRegistry::Load(PromptRegistry::BundledRoot());
  ASSERT_TRUE(bundled.ok());
  auto refused = Expand("ptxbench_triton.json", Examples().at("ptxbench_triton.json"), **bundled);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("a PTXBench tag needs its hub"));
}

}  // namespace
}  // namespace ptxbench::experiment_spec
