#include "workloads/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "workloads/testing/safetensors_file.h"

namespace ptxbench::workloads {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAreArray;

// ---- The bundled set, checked against shared/WORKLOADS.md. ----

class BundledTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto loaded = DefinitionRegistry::Load({});
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    registry_ = loaded->release();
  }
  static void TearDownTestSuite() { delete registry_; }

  static const Definition& Get(const std::string& name) {
    auto d = registry_->Find(name);
    EXPECT_TRUE(d.ok()) << d.status();
    return **d;
  }

  static inline DefinitionRegistry* registry_ = nullptr;
};

std::string Describe(const std::vector<TensorSpec>& tensors) {
  std::vector<std::string> parts;
  for (const TensorSpec& t : tensors) {
    parts.push_back(
        absl::StrCat(t.name, "[", absl::StrJoin(t.shape, ","), "]:", t.dtype));
  }
  return absl::StrJoin(parts, " ");
}

std::string DescribeAxes(const Definition& d) {
  std::vector<std::string> parts;
  for (const Axis& a : d.axes) {
    parts.push_back(a.is_const ? absl::StrCat(a.name, "=", a.value) : a.name + "=var");
  }
  return absl::StrJoin(parts, " ");
}

std::vector<int64_t> VarValues(const Definition& d, const std::string& axis) {
  std::vector<int64_t> values;
  for (const Workload& w : d.workloads) values.push_back(w.axes.at(axis));
  return values;
}

// The reference defines run() over inputs then outputs, in the definition's
// order (destination-passing style).
// FlashInfer-Bench's convention: run() takes the inputs and returns the outputs.
std::string ExpectedRunSignature(const Definition& d) {
  std::vector<std::string> names;
  for (const TensorSpec& t : d.inputs) names.push_back(t.name);
  return absl::StrCat("def run(", absl::StrJoin(names, ", "), "):");
}

TEST_F(BundledTest, ListsTheFiveDefinitionsSortedByName) {
  std::vector<std::string> names;
  for (const Definition* d : registry_->List()) names.push_back(d->name);
  EXPECT_THAT(names,
              ElementsAre("gemm_n7168_k5120", "mha_bwd_d128", "mha_bwd_d128_causal",
                          "mha_with_lse_d128", "mha_with_lse_d128_causal"));
}

TEST_F(BundledTest, GemmMatchesWorkloadsMd) {
  const Definition& d = Get("gemm_n7168_k5120");
  EXPECT_EQ(d.op_type, "gemm");
  EXPECT_EQ(DescribeAxes(d), "M=var N=7168 K=5120");
  EXPECT_EQ(Describe(d.inputs), "A[M,K]:bfloat16 B[N,K]:bfloat16");
  EXPECT_EQ(Describe(d.outputs), "C[M,N]:bfloat16");
  EXPECT_THAT(VarValues(d, "M"), ElementsAre(70, 232, 972, 2379, 8192));
  EXPECT_EQ(d.trials, 3);
}

TEST_F(BundledTest, AttentionForwardMatchesWorkloadsMd) {
  for (const char* name : {"mha_with_lse_d128", "mha_with_lse_d128_causal"}) {
    const Definition& d = Get(name);
    EXPECT_EQ(d.op_type, "attention");
    EXPECT_EQ(DescribeAxes(d), "B=4 H=48 S=var D=128");
    EXPECT_EQ(Describe(d.inputs),
              "Q[B,H,S,D]:bfloat16 K[B,H,S,D]:bfloat16 V[B,H,S,D]:bfloat16");
    EXPECT_EQ(Describe(d.outputs), "O[B,H,S,D]:bfloat16 LSE[B,H,S]:float32");
    EXPECT_EQ(d.trials, 3);
  }
  EXPECT_THAT(VarValues(Get("mha_with_lse_d128"), "S"), ElementsAre(2048, 4096));
  EXPECT_THAT(VarValues(Get("mha_with_lse_d128_causal"), "S"), ElementsAre(4096));
}

TEST_F(BundledTest, AttentionBackwardMatchesWorkloadsMd) {
  for (const char* name : {"mha_bwd_d128", "mha_bwd_d128_causal"}) {
    const Definition& d = Get(name);
    EXPECT_EQ(d.op_type, "attention");
    EXPECT_EQ(DescribeAxes(d), "B=4 H=48 S=var d=128");
    EXPECT_EQ(Describe(d.inputs),
              "Q[B,H,S,d]:bfloat16 K[B,H,S,d]:bfloat16 V[B,H,S,d]:bfloat16 "
              "O[B,H,S,d]:bfloat16 dO[B,H,S,d]:bfloat16 L[B,H,S]:float32");
    EXPECT_EQ(Describe(d.outputs),
              "dQ[B,H,S,d]:bfloat16 dK[B,H,S,d]:bfloat16 dV[B,H,S,d]:bfloat16");
    EXPECT_THAT(VarValues(d, "S"), ElementsAre(4096));
    EXPECT_EQ(d.trials, 1);
  }
}

TEST_F(BundledTest, EveryDefinitionIsCompleteAndConsistent) {
  std::set<std::string> uuids;
  for (const Definition* d : registry_->List()) {
    SCOPED_TRACE(d->name);
    EXPECT_DOUBLE_EQ(d->tolerance.atol, 1e-2);
    EXPECT_DOUBLE_EQ(d->tolerance.rtol, 1e-2);
    EXPECT_DOUBLE_EQ(d->tolerance.required_matched_ratio, 1.0);
    EXPECT_FALSE(d->description.empty());
    EXPECT_THAT(d->tags, ::testing::IsSupersetOf({"hopper", "bf16"}));
    EXPECT_THAT(d->reference, HasSubstr(ExpectedRunSignature(*d)));
    EXPECT_THAT(d->reference, HasSubstr("import torch"));
    EXPECT_FALSE(d->json.empty());
    // The workloads carry one random source per input and unique uuids.
    for (const Workload& w : d->workloads) {
      EXPECT_TRUE(uuids.insert(w.uuid).second) << w.uuid;
      ASSERT_EQ(w.inputs.size(), d->inputs.size());
      for (const auto& [name, source] : w.inputs) EXPECT_EQ(source.type, "random");
      EXPECT_TRUE(d->AxisValues(w).ok());
    }
  }
}

TEST_F(BundledTest, FindNamesTheKnownDefinitions) {
  auto missing = registry_->Find("gemm_n4096");
  ASSERT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(std::string(missing.status().message()),
            "unknown definition 'gemm_n4096' (known: gemm_n7168_k5120, mha_bwd_d128, "
            "mha_bwd_d128_causal, mha_with_lse_d128, mha_with_lse_d128_causal)");
}

// ---- Loading user datasets: every rule, one test each. ----

class DatasetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) /
            absl::StrCat("workloads_registry_test_",
                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  static void Write(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }

  static std::string DefinitionJson(const std::string& name, const std::string& op_type) {
    nlohmann::ordered_json d = {
        {"name", name},
        {"op_type", op_type},
        {"axes", {{"N", {{"type", "var"}}}}},
        {"inputs", {{"x", {{"shape", {"N"}}, {"dtype", "float32"}}}}},
        {"outputs", {{"y", {{"shape", {"N"}}, {"dtype", "float32"}}}}},
        {"reference", "def run(x, y): y.copy_(x)"}};
    return d.dump(2);
  }

  static std::string WorkloadLine(const std::string& definition, const std::string& uuid,
                                  int n) {
    nlohmann::json line = {{"definition", definition},
                           {"solution", nullptr},
                           {"workload",
                            {{"uuid", uuid},
                             {"axes", {{"N", n}}},
                             {"inputs", {{"x", {{"type", "random"}}}}}}},
                           {"evaluation", nullptr}};
    return line.dump();
  }

  // Writes definition `name` of `op_type` under `root` with the given lines.
  void AddDefinition(const fs::path& root, const std::string& name,
                     const std::vector<std::string>& lines,
                     const std::string& op_type = "copy") {
    Write(root / "definitions" / op_type / (name + ".json"),
          DefinitionJson(name, op_type));
    Write(root / "workloads" / op_type / (name + ".jsonl"),
          absl::StrJoin(lines, "\n") + "\n");
  }

  absl::StatusOr<std::unique_ptr<DefinitionRegistry>> Load(bool prefer = false) {
    return DefinitionRegistry::Load({{root_.string()}, prefer});
  }

  static std::string Problems(const DefinitionRegistry& r) {
    return absl::StrJoin(r.problems(), "\n");
  }

  static constexpr char kUuid1[] = "11111111-2222-4333-8444-555555555555";
  static constexpr char kUuid2[] = "11111111-2222-4333-8444-666666666666";
  fs::path root_;
};

TEST_F(DatasetTest, LoadsAValidDatasetSkippingBlankLines) {
  AddDefinition(
      root_, "copy_a",
      {WorkloadLine("copy_a", kUuid1, 8), "", WorkloadLine("copy_a", kUuid2, 16)});
  auto registry = Load();
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_THAT((*registry)->problems(), ElementsAre());
  auto d = (*registry)->Find("copy_a");
  ASSERT_TRUE(d.ok());
  ASSERT_EQ((*d)->workloads.size(), 2u);
  EXPECT_EQ((*d)->workloads[1].axes.at("N"), 16);
  // Provenance: the dataset root and a version over the definition and its workloads.
  EXPECT_EQ((*d)->dataset, root_.string());
  EXPECT_EQ((*d)->version.size(), 64u);
  EXPECT_EQ((*(*registry)->Find("gemm_n7168_k5120"))->dataset, "bundled");
}

TEST_F(DatasetTest, TheVersionChangesWithTheDefinitionOrItsWorkloads) {
  AddDefinition(root_, "copy_a", {WorkloadLine("copy_a", kUuid1, 8)});
  const std::string v1 = (*(*Load())->Find("copy_a"))->version;
  AddDefinition(root_, "copy_a", {WorkloadLine("copy_a", kUuid1, 9)});
  const std::string v2 = (*(*Load())->Find("copy_a"))->version;
  EXPECT_NE(v1, v2);
  AddDefinition(root_, "copy_a", {WorkloadLine("copy_a", kUuid1, 8)});
  EXPECT_EQ((*(*Load())->Find("copy_a"))->version, v1);
}

TEST_F(DatasetTest, RejectsMissingRoot) {
  auto registry = Load();
  ASSERT_EQ(registry.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(registry.status().message()),
              HasSubstr("has no definitions/ folder"));
}

TEST_F(DatasetTest, ADatasetThatYieldsNothingIsAnError) {
  Write(root_ / "definitions" / "broken.json", "{");
  auto registry = Load();
  ASSERT_EQ(registry.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(registry.status().message()), HasSubstr("yields no definition: "));
  EXPECT_THAT(std::string(registry.status().message()), HasSubstr("broken.json"));
}

TEST_F(DatasetTest, TheFlatLayoutLoadsLikeTheNestedOne) {
  // FlashInfer-Bench's own examples: definitions/*.json, workloads/*.jsonl.
  Write(root_ / "definitions" / "copy_a.json", DefinitionJson("copy_a", "copy"));
  Write(root_ / "workloads" / "copy_a.jsonl", WorkloadLine("copy_a", kUuid1, 8));
  auto registry = Load();
  ASSERT_TRUE(registry.ok()) << registry.status();
  auto d = (*registry)->Find("copy_a");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ((*d)->workloads.size(), 1u);
}

TEST_F(DatasetTest, DefinitionsAreKeyedByNameAndWorkloadsByTheirDefinitionField) {
  Write(root_ / "definitions" / "deep" / "er" / "other.json", DefinitionJson("copy_a", "copy"));
  Write(root_ / "workloads" / "all.jsonl", WorkloadLine("copy_a", kUuid1, 8));
  auto registry = Load();
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_EQ((*(*registry)->Find("copy_a"))->workloads.size(), 1u);
}

TEST_F(DatasetTest, ADefinitionWithoutWorkloadsLoadsButCannotBeUsed) {
  Write(root_ / "definitions" / "copy" / "copy_a.json", DefinitionJson("copy_a", "copy"));
  auto registry = Load();
  ASSERT_TRUE(registry.ok()) << registry.status();
  auto d = (*registry)->Find("copy_a");
  ASSERT_TRUE(d.ok()) << d.status();
  absl::Status usable = CheckUsable(**d);
  EXPECT_EQ(usable.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(usable.message()), HasSubstr("copy_a"));
  EXPECT_THAT(std::string(usable.message()), HasSubstr("has no workloads yet"));
}

TEST_F(DatasetTest, ABadDefinitionFileSkipsOnlyItself) {
  AddDefinition(root_, "copy_a", {WorkloadLine("copy_a", kUuid1, 8)});
  Write(root_ / "definitions" / "copy" / "copy_b.json", "{\"name\": ");
  auto registry = Load();
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_TRUE((*registry)->Find("copy_a").ok());
  ASSERT_EQ((*registry)->problems().size(), 1u);
  EXPECT_THAT((*registry)->problems()[0], HasSubstr("copy_b.json"));
  EXPECT_THAT((*registry)->problems()[0], HasSubstr("(skipped)"));
  // Asking for a name that is not there says what was skipped.
  EXPECT_THAT(std::string((*registry)->Find("copy_b").status().message()),
              HasSubstr("1 file(s) of the datasets were skipped: "));
}

TEST_F(DatasetTest, ABadWorkloadLineSkipsItsWholeFile) {
  AddDefinition(root_, "copy_a",
                {WorkloadLine("copy_a", kUuid1, 8), WorkloadLine("copy_a", kUuid2, -1)});
  AddDefinition(root_, "copy_b", {WorkloadLine("copy_b", kUuid1, 8)});
  auto registry = Load();
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_TRUE((*(*registry)->Find("copy_a"))->workloads.empty());
  EXPECT_EQ((*(*registry)->Find("copy_b"))->workloads.size(), 1u);
  EXPECT_THAT(Problems(**registry),
              HasSubstr("copy_a.jsonl:2: $.workload.axes.N: expected a positive integer, found -1 "
                        "(the whole file is skipped)"));
}

TEST_F(DatasetTest, AMalformedWorkloadLineNamesItsPosition) {
  AddDefinition(root_, "copy_a", {WorkloadLine("copy_a", kUuid1, 8), "{\"definition\": }"});
  auto registry = Load();
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_THAT(Problems(**registry), HasSubstr("copy_a.jsonl:2: line 1, column 16: malformed JSON"));
}

TEST_F(DatasetTest, AWorkloadMissingAVarAxisIsAProblem) {
  AddDefinition(
      root_, "copy_a",
      {R"({"definition": "copy_a", "workload": {"uuid": ")" + std::string(kUuid1) +
       R"(", "axes": {}, "inputs": {"x": {"type": "random"}}}})"});
  auto registry = Load();
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_THAT(Problems(**registry),
              HasSubstr("copy_a.jsonl:1: $.workload.axes.N: expected a value for the var axis, "
                        "found nothing"));
}

TEST_F(DatasetTest, ARepeatedIdOfOneDefinitionSkipsTheFile) {
  AddDefinition(root_, "copy_a",
                {WorkloadLine("copy_a", kUuid1, 8), WorkloadLine("copy_a", kUuid1, 16)});
  auto registry = Load();
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_THAT(Problems(**registry),
              HasSubstr(absl::StrCat("copy_a.jsonl:2: $.workload.uuid: expected an id no other "
                                     "workload of the definition has, found \"",
                                     kUuid1, "\"")));
  EXPECT_TRUE((*(*registry)->Find("copy_a"))->workloads.empty());
}

TEST_F(DatasetTest, OneIdMayServeTwoDefinitions) {
  AddDefinition(root_, "copy_a", {WorkloadLine("copy_a", kUuid1, 8)});
  AddDefinition(root_, "copy_b", {WorkloadLine("copy_b", kUuid1, 8)});
  auto registry = Load();
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_THAT((*registry)->problems(), ElementsAre());
}

TEST_F(DatasetTest, WorkloadsOfAnUndefinedNameAreListed) {
  AddDefinition(root_, "copy_a", {WorkloadLine("copy_a", kUuid1, 8)});
  Write(root_ / "workloads" / "copy" / "copy_old.jsonl", WorkloadLine("copy_old", kUuid2, 8));
  auto registry = Load();
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_THAT(Problems(**registry),
              HasSubstr("copy_old.jsonl: workloads of 'copy_old', which this dataset does not "
                        "define (skipped)"));
}

TEST_F(DatasetTest, ALaterRootMayNotRedefineAName) {
  const fs::path second = root_ / "second";
  AddDefinition(root_ / "first", "copy_a", {WorkloadLine("copy_a", kUuid1, 8)});
  AddDefinition(second, "copy_a", {WorkloadLine("copy_a", kUuid2, 8)});
  AddDefinition(second, "copy_b", {WorkloadLine("copy_b", kUuid2, 8)});
  auto registry = DefinitionRegistry::Load({{(root_ / "first").string(), second.string()}});
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_EQ((*(*registry)->Find("copy_a"))->workloads[0].uuid, kUuid1);
  EXPECT_THAT(Problems(**registry), HasSubstr("definition 'copy_a' is already defined by "));
  EXPECT_THAT(Problems(**registry),
              HasSubstr((root_ / "first" / "definitions" / "copy" / "copy_a.json").string()));
}

TEST_F(DatasetTest, ABundledNameIsReplacedOnlyWhenTheUserPrefersTheDataset) {
  AddDefinition(root_, "gemm_n7168_k5120", {WorkloadLine("gemm_n7168_k5120", kUuid1, 8)}, "gemm");
  auto registry = Load();
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_EQ((*(*registry)->Find("gemm_n7168_k5120"))->dataset, "bundled");
  EXPECT_THAT(Problems(**registry), HasSubstr("pass --prefer-dataset to use the dataset's"));
  registry = Load(/*prefer=*/true);
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_EQ((*(*registry)->Find("gemm_n7168_k5120"))->dataset, root_.string());
  EXPECT_THAT((*registry)->problems(), ElementsAre());
}

TEST_F(DatasetTest, SafetensorsPathsResolveAgainstTheDatasetRoot) {
  nlohmann::json line = nlohmann::json::parse(WorkloadLine("copy_a", kUuid1, 8));
  line["workload"]["inputs"]["x"] = {{"type", "safetensors"},
                                     {"path", "./blob/workloads/copy/copy_a/x.safetensors"},
                                     {"tensor_key", "x"}};
  AddDefinition(root_, "copy_a", {line.dump()});
  auto registry = Load();
  ASSERT_TRUE(registry.ok()) << registry.status();
  const InputSource& x = (*(*registry)->Find("copy_a"))->workloads[0].inputs.at("x");
  EXPECT_EQ(x.resolved_path, (root_ / "blob/workloads/copy/copy_a/x.safetensors").string());
}

TEST_F(DatasetTest, ASafetensorsInputOfTheDatasetIsLoadedExactlyOrRefused) {
  nlohmann::json line = nlohmann::json::parse(WorkloadLine("copy_a", kUuid1, 8));
  line["workload"]["inputs"]["x"] = {
      {"type", "safetensors"}, {"path", "blob/copy_a/x.safetensors"}, {"tensor_key", "x"}};
  nlohmann::json longer = nlohmann::json::parse(WorkloadLine("copy_a", kUuid2, 16));
  longer["workload"]["inputs"]["x"] = line["workload"]["inputs"]["x"];
  AddDefinition(root_, "copy_a", {line.dump()});
  Write(root_ / "blob" / "copy_a" / "x.safetensors",
        testing::PackSafetensors(
            {{"x", {{"dtype", "F32"}, {"shape", {8}}, {"data_offsets", {0, 32}}}}},
            std::string(32, '\0')));
  auto registry = Load();
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_TRUE(CheckUsable(**(*registry)->Find("copy_a")).ok());
  // The same file for a workload of N = 16 holds a tensor of another shape.
  AddDefinition(root_, "copy_a", {line.dump(), longer.dump()});
  registry = Load();
  ASSERT_TRUE(registry.ok()) << registry.status();
  absl::Status usable = CheckUsable(**(*registry)->Find("copy_a"));
  EXPECT_EQ(usable.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(std::string(usable.message()),
            absl::StrCat("definition copy_a, workload ", kUuid2, ", input x: ",
                         (root_ / "blob/copy_a/x.safetensors").string(),
                         ": tensor \"x\" has shape [8], the workload needs [16]"));
}

TEST_F(DatasetTest, MergesRootsAndTheBundledSet) {
  AddDefinition(root_, "copy_a", {WorkloadLine("copy_a", kUuid1, 8)});
  auto registry = Load();
  ASSERT_TRUE(registry.ok()) << registry.status();
  EXPECT_EQ((*registry)->List().size(), 6u);
  EXPECT_TRUE((*registry)->Find("copy_a").ok());
  EXPECT_TRUE((*registry)->Find("gemm_n7168_k5120").ok());
}

}  // namespace
}  // namespace ptxbench::workloads
