// The flashinfer-trace export read back by ptxbench's own readers: the
// dataset loads (workloads/registry.h), every solution parses
// (workloads/solution.h) and every trace line parses (workloads/trace.h).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "common/file.h"
#include "common/hash.h"
#include "results/exports/export.h"
#include "results/exports/testing/scratch.h"
#include "results/exports/testing/trajectories.h"
#include "workloads/registry.h"
#include "workloads/solution.h"
#include "workloads/trace.h"

namespace ptxbench::exports {
namespace {

namespace fs = std::filesystem;
namespace v1 = ::ptxbench::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::TurnKind;

constexpr char kSolutions[] = "solutions/gemm/gemm_export_test";
constexpr char kTraces[] = "traces/gemm/gemm_export_test.jsonl";

std::vector<std::string> Lines(const std::string& path) {
  auto text = ReadFile(path);
  EXPECT_TRUE(text.ok()) << text.status();
  std::vector<std::string> out = absl::StrSplit(text.value_or(""), '\n', absl::SkipEmpty());
  return out;
}

class FlashinferTest : public ::testing::Test {
 protected:
  void Export(const std::string& language, const std::vector<v1::Trajectory>& trajectories) {
    ASSERT_TRUE(testing::ExportAll(Format::kFlashinferTrace, root(), {},
                                   testing::Experiment(language), testing::Definitions(),
                                   trajectories)
                    .ok());
  }
  std::string root() const { return scratch_ / "dataset"; }
  std::string File(const std::string& relative) const { return root() + "/" + relative; }

  // Every solution file, parsed, by name.
  std::map<std::string, workloads::Solution> Solutions() {
    std::map<std::string, workloads::Solution> out;
    if (!fs::exists(File(kSolutions))) return out;
    for (const auto& e : fs::directory_iterator(File(kSolutions))) {
      auto text = ReadFile(e.path().string());
      EXPECT_TRUE(text.ok());
      auto solution = workloads::ParseSolution(*text, e.path().string());
      EXPECT_TRUE(solution.ok()) << solution.status();
      if (!solution.ok()) continue;
      EXPECT_EQ(solution->name + ".json", e.path().filename().string());
      out[solution->name] = *solution;
    }
    return out;
  }

  testing::Scratch scratch_;
};

TEST_F(FlashinferTest, TheDatasetLoadsBack) {
  Export("cuda", {testing::Trajectory(0, v1::SUBMITTED,
                                      {{TurnKind::kNoCode},
                                       {TurnKind::kIncorrect},
                                       {TurnKind::kCudnn},
                                       {TurnKind::kCompiled},
                                       {TurnKind::kCorrect, 2.0}})});
  workloads::DatasetOptions options;
  options.datasets = {root()};
  auto registry = workloads::DefinitionRegistry::Load(options);
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_THAT((*registry)->problems(), ElementsAre());
  auto d = (*registry)->Find(testing::kDefinition);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ((*d)->workloads.size(), 2u);

  // The documents as given, byte for byte.
  const v1::DefinitionDocument doc = testing::Definitions()[0];
  EXPECT_EQ(*ReadFile(File("definitions/gemm/gemm_export_test.json")), doc.json());
  EXPECT_THAT(Lines(File("workloads/gemm/gemm_export_test.jsonl")),
              ElementsAre(doc.workload_lines(0), doc.workload_lines(1)));
}

TEST_F(FlashinferTest, EveryKernelIsASolutionAndEveryResultATrace) {
  v1::Trajectory t = testing::Trajectory(0, v1::SUBMITTED,
                                         {{TurnKind::kIncorrect},
                                          {TurnKind::kCudnn},
                                          {TurnKind::kCorrect, 2.0},
                                          {TurnKind::kCorrect, 2.0}});
  // The last turn submits the same kernel again: one solution for both.
  t.mutable_turns(3)->set_kernel_source(t.turns(2).kernel_source());
  t.mutable_turns(3)->set_kernel_sha256(t.turns(2).kernel_sha256());
  Export("cuda", {t});

  const auto solutions = Solutions();
  ASSERT_EQ(solutions.size(), 3u);  // incorrect, cudnn, correct (twice)
  for (const auto& [name, s] : solutions) {
    EXPECT_TRUE(absl::StartsWith(name, "m_one_gemm_export_test_")) << name;
    EXPECT_EQ(s.definition, testing::kDefinition);
    EXPECT_EQ(s.author, "m/one");
    EXPECT_EQ(s.language, "cuda");
    EXPECT_EQ(s.entry_file, "kernel.cu");
    EXPECT_EQ(s.entry_symbol, "run");
    EXPECT_EQ(s.binding, "");  // ptxbench's own kernel ABI
    ASSERT_EQ(s.sources.size(), 1u);
    EXPECT_TRUE(workloads::CheckSolutionSupported(s).ok());
  }
  const std::string correct = "m_one_gemm_export_test_" + t.turns(2).kernel_sha256().substr(0, 12);
  ASSERT_TRUE(solutions.contains(correct));
  EXPECT_EQ(solutions.at(correct).sources[0].content, t.turns(2).kernel_source());

  const std::vector<std::string> lines = Lines(File(kTraces));
  ASSERT_EQ(lines.size(), 2u + 2 + 2);  // the cuDNN kernel has no FlashInfer-Bench status
  for (const std::string& line : lines) {
    auto trace = workloads::ParseTraceLine(line, kTraces);
    ASSERT_TRUE(trace.ok()) << trace.status();
    EXPECT_EQ(trace->definition, testing::kDefinition);
    ASSERT_TRUE(trace->solution.has_value());
    EXPECT_TRUE(solutions.contains(*trace->solution)) << *trace->solution;
    ASSERT_TRUE(trace->evaluation.has_value());
    EXPECT_TRUE(workloads::IsFlashInferStatus(trace->evaluation->status));
    EXPECT_EQ(trace->evaluation->environment.hardware, "NVIDIA H200");
    EXPECT_EQ(trace->evaluation->environment.libs.at("cuda"), "12.8");
    // The dataset's workload, inputs included.
    EXPECT_EQ(trace->workload.inputs.size(), 2u);
    EXPECT_EQ(trace->workload.axes.size(), 1u);
  }
  auto first = workloads::ParseTraceLine(lines[0], "t");
  EXPECT_EQ(first->evaluation->status, "INCORRECT_NUMERICAL");
  EXPECT_TRUE(first->evaluation->correctness.has_value());
  EXPECT_FALSE(first->evaluation->performance.has_value());
  auto passed = workloads::ParseTraceLine(lines[3], "t");
  EXPECT_EQ(passed->evaluation->status, "PASSED");
  EXPECT_EQ(passed->evaluation->performance->speedup_factor, 4.0);
  EXPECT_THAT(lines[3], HasSubstr(R"("ptxbench":{"experiment_id":"exp_00112233aabbccdd")"));
}

TEST_F(FlashinferTest, TvmFfiKernelsKeepTheirBindingAndEntry) {
  v1::Trajectory t = testing::Trajectory(0, v1::SUBMITTED, {{TurnKind::kCorrect, 2.0}});
  t.mutable_turns(0)->set_kernel_source(
      "#include <tvm/ffi/function.h>\nvoid gemm(tvm::ffi::TensorView A) {}\n"
      "TVM_FFI_DLL_EXPORT_TYPED_FUNC( my_gemm , gemm);\n");
  t.mutable_turns(0)->set_kernel_sha256(Sha256Hex(t.turns(0).kernel_source()));
  Export("cuda", {t});
  const auto solutions = Solutions();
  ASSERT_EQ(solutions.size(), 1u);
  EXPECT_EQ(solutions.begin()->second.binding, "tvm-ffi");
  EXPECT_EQ(solutions.begin()->second.entry_symbol, "my_gemm");
}

TEST_F(FlashinferTest, ASolutionFromTheModelIsWrittenBackAsItWas) {
  const v1::Trajectory t =
      testing::Trajectory(0, v1::SUBMITTED, {{TurnKind::kCorrect, 2.0}}, "solution");
  // Another kernel under the same name: it cannot keep it (FlashInfer-Bench
  // refuses a dataset that repeats a solution name).
  v1::Trajectory same_name =
      testing::Trajectory(1, v1::SUBMITTED, {{TurnKind::kCorrect, 2.0}}, "solution");
  v1::Turn& turn = *same_name.mutable_turns(0);
  turn.set_kernel_source(
      absl::StrReplaceAll(turn.kernel_source(), {{"own_solution_1_0", "own_solution_0_0"}}));
  turn.set_kernel_sha256(Sha256Hex(turn.kernel_source()));
  Export("solution", {t, t, same_name});

  const auto solutions = Solutions();
  const std::string renamed = "m_one_gemm_export_test_" + turn.kernel_sha256().substr(0, 12);
  EXPECT_THAT(solutions, ElementsAre(::testing::Key(renamed), ::testing::Key("own_solution_0_0")));
  EXPECT_EQ(*ReadFile(File(std::string(kSolutions) + "/own_solution_0_0.json")),
            t.turns(0).kernel_source());
  EXPECT_THAT(solutions.at(renamed).sources[0].content, HasSubstr("sample 1 turn 0"));
  std::set<std::string> named;
  for (const std::string& line : Lines(File(kTraces))) {
    named.insert(*workloads::ParseTraceLine(line, "t")->solution);
  }
  EXPECT_THAT(named, ElementsAre(renamed, "own_solution_0_0"));
}

// A Triton experiment's kernels are Triton solutions as PTXBench's test
// scripts write them (kernel.py::run, destination-passing, the experiment's
// GPU family as target), which read back as the module that was evaluated;
// the dataset loads back and every result is a trace of its solution.
TEST_F(FlashinferTest, TritonKernelsAreTritonSolutions) {
  const v1::Trajectory t =
      testing::Trajectory(0, v1::SUBMITTED, {{TurnKind::kIncorrect}, {TurnKind::kCorrect, 2.0}},
                          "triton");
  Export("triton", {t});
  const auto solutions = Solutions();
  ASSERT_EQ(solutions.size(), 2u);
  for (const auto& [name, s] : solutions) {
    EXPECT_EQ(s.language, "triton");
    EXPECT_EQ(s.entry_file, "kernel.py");
    EXPECT_EQ(s.entry_symbol, "run");
    EXPECT_TRUE(s.destination_passing_style);
    EXPECT_EQ(s.binding, "");
    EXPECT_THAT(s.target_hardware, ElementsAre("Hopper"));
    auto module = workloads::TritonModuleOf(s);
    ASSERT_TRUE(module.ok()) << module.status();
    EXPECT_THAT(*module, HasSubstr("@triton.jit"));
  }
  const std::string name = "m_one_gemm_export_test_" + t.turns(1).kernel_sha256().substr(0, 12);
  ASSERT_TRUE(solutions.contains(name));
  EXPECT_EQ(*workloads::TritonModuleOf(solutions.at(name)), t.turns(1).kernel_source());
  int traces = 0;
  for (const std::string& line : Lines(File(kTraces))) {
    auto trace = workloads::ParseTraceLine(line, "t");
    ASSERT_TRUE(trace.ok()) << trace.status();
    EXPECT_TRUE(solutions.contains(*trace->solution));
    ++traces;
  }
  EXPECT_EQ(traces, 4);  // two workloads, two turns
  workloads::DatasetOptions options;
  options.datasets = {root()};
  auto registry = workloads::DefinitionRegistry::Load(options);
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_THAT((*registry)->problems(), ElementsAre());
}

TEST_F(FlashinferTest, RawPtxKernelsAreLeftOut) {
  Export("ptx", {testing::Trajectory(0, v1::SUBMITTED, {{TurnKind::kCorrect, 2.0}}, "ptx")});
  EXPECT_THAT(testing::FilesUnder(root()),
              ElementsAre("definitions/gemm/gemm_export_test.json",
                          "workloads/gemm/gemm_export_test.jsonl"));
}

TEST_F(FlashinferTest, NeedsTheDocumentOfEveryDefinitionUsed) {
  auto writer = MakeWriter(Format::kFlashinferTrace, root(), {});
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->BeginExperiment(testing::Experiment(), {}).ok());
  absl::Status s = (*writer)->Add(testing::Trajectory(0, v1::SUBMITTED, {{TurnKind::kCorrect}}));
  ASSERT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "trajectory tr_test_0 uses definition gemm_export_test, whose document was not given "
            "with its experiment");
}

TEST_F(FlashinferTest, RefusesTwoVersionsOfADefinition) {
  auto writer = MakeWriter(Format::kFlashinferTrace, root(), {});
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->BeginExperiment(testing::Experiment(), testing::Definitions()).ok());
  ASSERT_TRUE((*writer)->EndExperiment().ok());
  std::vector<v1::DefinitionDocument> changed = testing::Definitions();
  changed[0].set_json(changed[0].json() + " ");
  changed[0].set_version("other");
  absl::Status s = (*writer)->BeginExperiment(testing::Experiment(), changed);
  ASSERT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("definition gemm_export_test differs between the experiments"));
}

}  // namespace
}  // namespace ptxbench::exports
