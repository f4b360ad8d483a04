#include "workloads/importers/importer.h"

#include <stdlib.h>

#include <filesystem>
#include <map>
#include <string>

#include "common/data_dir.h"
#include "common/file.h"
#include "gtest/gtest.h"
#include "process/run.h"
#include "workloads/registry.h"

namespace ptxbench::workloads::importers {
namespace {

namespace fs = std::filesystem;

constexpr char kPython[] = "/usr/bin/python3";

std::string TestData(const std::string& suite) {
  return DataDir() + "/workloads/importers/testdata/" + suite;
}

std::string FreshDir() {
  std::string templ = (fs::temp_directory_path() / "ptxb_import_XXXXXX").string();
  char* made = mkdtemp(templ.data());
  return made ? std::string(made) : std::string();
}

// The tests run the real probe, which needs a Python with torch (Debian's
// python3-torch here).
bool HaveTorch() {
  process::RunOptions run;
  run.argv = {kPython, "-c", "import torch"};
  run.deadline = absl::Seconds(60);
  absl::StatusOr<process::RunResult> r = process::Run(run);
  return r.ok() && r->ok();
}

ImportReport MustImport(Suite suite, const std::string& out) {
  ImportOptions options;
  options.suite = suite;
  options.source = TestData(suite == Suite::kKernelBench ? "kernelbench" : "kernelbenchx");
  options.out = out;
  options.python = kPython;
  absl::StatusOr<ImportReport> report = Import(options);
  EXPECT_TRUE(report.ok()) << report.status();
  return report.ok() ? *report : ImportReport{};
}

std::map<std::string, std::string> Files(const std::string& root) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_regular_file()) {
      files[fs::relative(e.path(), root).string()] = *ReadFile(e.path().string());
    }
  }
  return files;
}

// Each suite's test data imported once for the tests that only read the result
// (a probe starts torch: seconds per task).
struct Imported {
  std::string out;
  ImportReport report;
};
const Imported& Once(Suite suite) {
  static std::map<Suite, Imported>* cache = new std::map<Suite, Imported>;
  auto it = cache->find(suite);
  if (it == cache->end()) {
    const std::string out = FreshDir();
    it = cache->emplace(suite, Imported{out, MustImport(suite, out)}).first;
  }
  return it->second;
}

class ImporterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveTorch()) GTEST_SKIP() << kPython << " has no torch (apt install python3-torch)";
  }
};

TEST_F(ImporterTest, KernelBenchTasksImportAndLoadWithTheRegistry) {
  const auto& [out, report] = Once(Suite::kKernelBench);
  EXPECT_EQ(report.tasks.size(), 3u);
  EXPECT_EQ(report.imported, 2) << report.Summary();
  auto registry = DefinitionRegistry::Load({{out}, false});
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_TRUE((*registry)->problems().empty());

  // A plain module: its forward's tensors are the inputs, in order.
  auto matmul = (*registry)->Find("kb_level1_1_Square_matrix_multiplication_");
  ASSERT_TRUE(matmul.ok()) << matmul.status();
  const Definition& d = **matmul;
  EXPECT_EQ(d.op_type, "level1");
  ASSERT_EQ(d.inputs.size(), 2u);
  EXPECT_EQ(d.inputs[0].name, "A");
  EXPECT_EQ(d.inputs[1].name, "B");
  EXPECT_EQ(d.inputs[0].dtype, "float32");
  ASSERT_EQ(d.outputs.size(), 1u);
  ASSERT_EQ(d.workloads.size(), 1u);
  auto dims = TensorDims(d.outputs[0], *d.AxisValues(d.workloads[0]));
  ASSERT_TRUE(dims.ok());
  EXPECT_EQ(*dims, (std::vector<int64_t>{4096, 4096}));
  EXPECT_NE(d.reference.find("def run(A, B):"), std::string::npos);
  EXPECT_TRUE(CheckUsable(d).ok());

  // A module with parameters: each is an input after the forward's.
  auto conv = (*registry)->Find("kb_level1_63_conv_standard_2D__square_input__square_kernel");
  ASSERT_TRUE(conv.ok()) << conv.status();
  ASSERT_EQ((*conv)->inputs.size(), 2u);
  EXPECT_EQ((*conv)->inputs[1].name, "conv2d_weight");
  auto weight = TensorDims((*conv)->inputs[1], *(*conv)->AxisValues((*conv)->workloads[0]));
  ASSERT_TRUE(weight.ok());
  EXPECT_EQ(weight->size(), 4u);
  EXPECT_NE((*conv)->reference.find("functional_call"), std::string::npos);
}

// The reference written runs as the reference host runs it (run(inputs) returns
// the outputs) and computes the task's Model: here on the CPU, a module with a
// parameter, against the same module called directly.
TEST_F(ImporterTest, TheWrittenReferenceComputesTheTasksModel) {
  const std::string& out = Once(Suite::kKernelBench).out;
  const std::string script = R"(
import json, sys, types, torch
d = json.load(open(sys.argv[1]))
m = types.ModuleType("ref"); exec(compile(d["reference"], "<reference>", "exec"), m.__dict__)
torch.manual_seed(1)
x = torch.randn(1, 16, 12, 12); w = torch.randn(128, 16, 3, 3)
got = m.run(x, w)
conv = m.Model(16, 128, 3)
with torch.no_grad(): conv.conv2d.weight.copy_(w)
want = conv(x)
print("same" if got.shape == want.shape and torch.allclose(got, want, atol=1e-5) else "differ")
)";
  process::RunOptions run;
  run.argv = {kPython, "-c", script,
              out + "/definitions/level1/kb_level1_63_conv_standard_2D__square_input__square_kernel.json"};
  run.deadline = absl::Seconds(120);
  absl::StatusOr<process::RunResult> r = process::Run(run);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->ok()) << r->output;
  EXPECT_NE(r->output.find("same"), std::string::npos) << r->output;
}

TEST_F(ImporterTest, ARefusedTaskSaysWhyAndIsCounted) {
  const auto& [out, report] = Once(Suite::kKernelBench);
  ASSERT_EQ(report.refused.count("integer-input"), 1u) << report.Summary();
  EXPECT_EQ(report.refused.at("integer-input"), 1);
  bool found = false;
  for (const TaskOutcome& t : report.tasks) {
    if (t.imported) continue;
    found = true;
    EXPECT_EQ(t.file, "level1/95_CrossEntropyLoss.py");
    EXPECT_NE(t.detail.find("int64"), std::string::npos) << t.detail;
    EXPECT_FALSE(fs::exists(fs::path(out) / "definitions" / "level1" / (t.name + ".json")));
  }
  EXPECT_TRUE(found);
  EXPECT_NE(report.Summary().find("refused 1: integer-input 1"), std::string::npos)
      << report.Summary();
  EXPECT_NE(ReadFile(out + "/import.json")->find("\"reason\": \"integer-input\""),
            std::string::npos);
}

TEST_F(ImporterTest, KernelBenchXTasksImportFromTheirTestsRandomCases) {
  const auto& [out, report] = Once(Suite::kKernelBenchX);
  EXPECT_EQ(report.imported, 1) << report.Summary();
  auto registry = DefinitionRegistry::Load({{out}, false});
  ASSERT_TRUE(registry.ok()) << registry.status();
  auto gelu = (*registry)->Find("kbx_Activation_gelu");
  ASSERT_TRUE(gelu.ok()) << gelu.status();
  EXPECT_EQ((*gelu)->op_type, "Activation");
  ASSERT_EQ((*gelu)->inputs.size(), 1u);
  EXPECT_EQ((*gelu)->inputs[0].name, "input");
  auto dims = TensorDims((*gelu)->inputs[0], *(*gelu)->AxisValues((*gelu)->workloads[0]));
  EXPECT_EQ(*dims, (std::vector<int64_t>{1024, 1024}));
  // The first random case's other argument is fixed in run().
  EXPECT_NE((*gelu)->reference.find("return gelu(input, approximate='none')"), std::string::npos)
      << (*gelu)->reference;
  // An optimizer step updates its parameters in place and returns nothing.
  ASSERT_EQ(report.tasks.size(), 2u);
  EXPECT_FALSE(report.tasks[1].imported);
  EXPECT_EQ(report.tasks[1].file, "Optimizer/SGD.py");
  EXPECT_TRUE(report.tasks[1].reason == "non-tensor-output" || report.tasks[1].reason == "in-place")
      << report.tasks[1].reason << ": " << report.tasks[1].detail;
}

TEST_F(ImporterTest, TheSameTreeGivesTheSameFiles) {
  // Probed one at a time here, two at a time for Once: the order of the probes
  // must not show in the files.
  const std::string& a = Once(Suite::kKernelBench).out;
  const std::string b = FreshDir();
  ImportOptions options;
  options.source = TestData("kernelbench");
  options.out = b;
  options.python = kPython;
  options.jobs = 1;
  ASSERT_TRUE(Import(options).ok());
  const auto files_a = Files(a), files_b = Files(b);
  EXPECT_GE(files_a.size(), 5u);
  EXPECT_EQ(files_a, files_b);
}

TEST(ImporterAnswerTest, AHostileAnswerIsARefusalNeverADefinition) {
  TaskOutcome t;
  t.file = "level1/x.py";
  t.name = "kb_level1_x";
  t.category = "level1";
  EXPECT_FALSE(FilesFromAnswer("not json", t).ok());
  EXPECT_EQ(t.reason, "probe-failed");
  EXPECT_FALSE(FilesFromAnswer(R"({"ok": false, "reason": "randomness", "detail": "dropout"})", t).ok());
  EXPECT_EQ(t.reason, "randomness");
  EXPECT_EQ(t.detail, "dropout");
  // A definition the strict reader refuses (an unknown dtype).
  const std::string bad = R"({"ok": true, "workloads": [{"axes": {}}], "definition": {
    "name": "x", "op_type": "y", "axes": {"N": {"type": "const", "value": 4}},
    "inputs": {"x": {"shape": ["N"], "dtype": "float128"}},
    "outputs": {"y": {"shape": ["N"], "dtype": "float32"}}, "reference": "def run(x): return x"}})";
  EXPECT_FALSE(FilesFromAnswer(bad, t).ok());
  EXPECT_EQ(t.reason, "probe-failed");
  EXPECT_FALSE(t.imported);
  // A good one: the name and op_type are the importer's, whatever the answer said.
  std::string good = bad;
  good.replace(good.find("float128"), 8, "float32");
  absl::StatusOr<ImportedFiles> files = FilesFromAnswer(good, t);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_TRUE(t.imported);
  EXPECT_NE(files->definition_json.find("\"name\": \"kb_level1_x\""), std::string::npos);
  EXPECT_NE(files->definition_json.find("\"op_type\": \"level1\""), std::string::npos);
  EXPECT_NE(files->workloads_jsonl.find("\"x\":{\"type\":\"random\"}"), std::string::npos);
}

}  // namespace
}  // namespace ptxbench::workloads::importers
