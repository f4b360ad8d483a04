#include "workloads/definition.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/strings/str_cat.h"
#include "workloads/testing/safetensors_file.h"

namespace ptxbench::workloads {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A small valid definition; tests change one field at a time.
nlohmann::ordered_json ValidDefinition() {
  return nlohmann::ordered_json::parse(R"({
    "name": "gemm_small", "op_type": "gemm", "tags": ["bf16"],
    "description": "C = A B^T",
    "axes": {"M": {"type": "var"}, "N": {"type": "const", "value": 64},
             "K": {"type": "const", "value": 32}},
    "inputs": {"A": {"shape": ["M", "K"], "dtype": "bfloat16"},
               "B": {"shape": ["N", "K"], "dtype": "bfloat16"},
               "alpha": {"shape": null, "dtype": "float32"}},
    "outputs": {"C": {"shape": ["M", "N"], "dtype": "bfloat16"}},
    "reference": "def run(A, B, alpha, C): ...",
    "constraints": ["M > 0"]
  })");
}

absl::StatusOr<Definition> Parse(const nlohmann::ordered_json& doc) {
  return ParseDefinition(doc.dump(), "gemm.json");
}

void ExpectError(const absl::StatusOr<Definition>& d, const std::string& message) {
  ASSERT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument) << d.status();
  EXPECT_EQ(std::string(d.status().message()), message);
}

TEST(DefinitionTest, ParsesAllFieldsInFileOrder) {
  auto d = Parse(ValidDefinition());
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->name, "gemm_small");
  EXPECT_EQ(d->op_type, "gemm");
  EXPECT_THAT(d->tags, ElementsAre("bf16"));
  ASSERT_EQ(d->axes.size(), 3u);
  EXPECT_EQ(d->axes[0].name, "M");
  EXPECT_FALSE(d->axes[0].is_const);
  EXPECT_EQ(d->axes[1].name, "N");
  EXPECT_TRUE(d->axes[1].is_const);
  EXPECT_EQ(d->axes[1].value, 64);
  ASSERT_EQ(d->inputs.size(), 3u);
  EXPECT_EQ(d->inputs[0].name, "A");
  EXPECT_THAT(d->inputs[0].shape, ElementsAre("M", "K"));
  EXPECT_EQ(d->inputs[1].name, "B");
  EXPECT_TRUE(d->inputs[2].is_scalar);
  EXPECT_EQ(d->inputs[2].dtype, "float32");
  ASSERT_EQ(d->outputs.size(), 1u);
  EXPECT_EQ(d->outputs[0].name, "C");
  EXPECT_THAT(d->constraints, ElementsAre("M > 0"));
  // Defaults of the ptxbench extras.
  EXPECT_DOUBLE_EQ(d->tolerance.atol, 1e-2);
  EXPECT_DOUBLE_EQ(d->tolerance.rtol, 1e-2);
  EXPECT_DOUBLE_EQ(d->tolerance.required_matched_ratio, 1.0);
  EXPECT_EQ(d->trials, 3);
  EXPECT_DOUBLE_EQ(d->importance, 1.0);
  EXPECT_EQ(d->json, ValidDefinition().dump());
}

TEST(DefinitionTest, ReadsPtxbenchExtras) {
  auto doc = ValidDefinition();
  doc["tolerance"] = {{"atol", 0.5}, {"rtol", 0.25}, {"required_matched_ratio", 0.99}};
  doc["trials"] = 1;
  doc["importance"] = 2.5;
  auto d = Parse(doc);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_DOUBLE_EQ(d->tolerance.atol, 0.5);
  EXPECT_DOUBLE_EQ(d->tolerance.rtol, 0.25);
  EXPECT_DOUBLE_EQ(d->tolerance.required_matched_ratio, 0.99);
  EXPECT_EQ(d->trials, 1);
  EXPECT_DOUBLE_EQ(d->importance, 2.5);
}

TEST(DefinitionTest, InputDistributionsDefaultToAllAndAreReadStrictly) {
  auto doc = ValidDefinition();
  auto d = Parse(doc);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->input_distributions, AllInputDistributions());
  doc["input_distributions"] = {"normal", "scaled_1e-3"};
  d = Parse(doc);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->input_distributions,
            (std::vector<InputDistribution>{InputDistribution::kNormal,
                                            InputDistribution::kScaledDown}));
  using Json = nlohmann::ordered_json;
  for (const Json& bad : {Json::array(), Json::array({"normal", "normal"}), Json::array({"cauchy"}),
                          Json("normal")}) {
    doc["input_distributions"] = bad;
    EXPECT_FALSE(Parse(doc).ok()) << bad.dump();
  }
}

TEST(DefinitionTest, UnknownTopLevelFieldsAreIgnoredForCompatibility) {
  auto doc = ValidDefinition();
  doc["future_field"] = {1, 2};
  EXPECT_TRUE(Parse(doc).ok());
}

TEST(DefinitionTest, RejectsBadAxisType) {
  auto doc = ValidDefinition();
  doc["axes"]["M"]["type"] = "variable";
  ExpectError(Parse(doc),
              "gemm.json: $.axes.M.type: expected \"const\" or \"var\", found \"variable\"");
}

TEST(DefinitionTest, RejectsConstAxisWithoutValue) {
  auto doc = ValidDefinition();
  doc["axes"]["N"].erase("value");
  ExpectError(Parse(doc),
              "gemm.json: $.axes.N.value: expected a value (the key is required), found nothing");
}

TEST(DefinitionTest, RejectsNonPositiveConstAxis) {
  auto doc = ValidDefinition();
  doc["axes"]["N"]["value"] = 0;
  ExpectError(Parse(doc), "gemm.json: $.axes.N.value: expected a positive integer, found 0");
}

TEST(DefinitionTest, RejectsShapeNamingUndeclaredAxis) {
  auto doc = ValidDefinition();
  doc["inputs"]["A"]["shape"] = {"M", "Q"};
  ExpectError(Parse(doc),
              "gemm.json: $.inputs.A.shape[1]: expected an axis declared in \"axes\" or an "
              "expression over them, found \"Q\"; expression \"Q\": unknown axis 'Q'");
}

TEST(DefinitionTest, ShapeEntriesMayBeExpressionsOverAxes) {
  auto doc = ValidDefinition();
  doc["axes"]["H"] = {{"type", "const"}, {"value", 8}};
  doc["outputs"]["C"]["shape"] = {"M", "N + K", "(N * H) / 4"};
  auto d = Parse(doc);
  ASSERT_TRUE(d.ok()) << d.status();
  auto dims = TensorDims(d->outputs[0], {{"M", 5}, {"N", 64}, {"K", 32}, {"H", 8}});
  ASSERT_TRUE(dims.ok()) << dims.status();
  EXPECT_THAT(*dims, ElementsAre(5, 96, 128));
  // At values where an entry is negative, the tensor has no shape.
  doc["outputs"]["C"]["shape"] = {"M - N"};
  d = Parse(doc);
  ASSERT_TRUE(d.ok()) << d.status();
  dims = TensorDims(d->outputs[0], {{"M", 5}, {"N", 64}, {"K", 32}});
  EXPECT_THAT(std::string(dims.status().message()), HasSubstr("shape entry \"M - N\" is -59"));
}

TEST(DefinitionTest, ShapeExpressionsNameOnlyDeclaredAxes) {
  auto doc = ValidDefinition();
  doc["outputs"]["C"]["shape"] = {"M", "N + Q"};
  auto d = Parse(doc);
  ASSERT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(d.status().message()),
              HasSubstr("$.outputs.C.shape[1]: expected an axis declared in \"axes\" or an "
                        "expression over them, found \"N + Q\""));
  EXPECT_THAT(std::string(d.status().message()), HasSubstr("unknown axis 'Q'"));
  doc["outputs"]["C"]["shape"] = {"M", "N +"};
  EXPECT_FALSE(Parse(doc).ok());
}

TEST(DefinitionTest, NamespacedTagsCarryTheirMeaning) {
  struct Case {
    std::vector<std::string> tags;
    bool causal, backward;
  };
  for (const Case& c : std::vector<Case>{{{}, false, false},
                                         {{"causal"}, true, false},
                                         {{"causal:true", "stage:prefill"}, true, false},
                                         {{"mask:causal"}, true, false},
                                         {{"causal:false"}, false, false},
                                         {{"backward"}, false, true},
                                         {{"direction:backward", "causal:true"}, true, true},
                                         {{"direction:forward"}, false, false},
                                         {{"model:llama", "status:verified"}, false, false}}) {
    auto doc = ValidDefinition();
    doc["tags"] = c.tags;
    auto d = Parse(doc);
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(IsCausal(*d), c.causal) << doc["tags"].dump();
    EXPECT_EQ(IsBackward(*d), c.backward) << doc["tags"].dump();
  }
}

TEST(DefinitionTest, ContradictingTagsAreRefused) {
  auto doc = ValidDefinition();
  doc["tags"] = {"causal:true", "causal:false"};
  auto d = Parse(doc);
  ASSERT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(d.status().message()),
              HasSubstr("\"causal:true\" and \"causal:false\" contradict each other"));
  doc["tags"] = {"backward", "direction:forward"};
  EXPECT_FALSE(Parse(doc).ok());
}

TEST(DefinitionTest, RejectsUnknownDtype) {
  auto doc = ValidDefinition();
  doc["outputs"]["C"]["dtype"] = "bf16";
  auto d = Parse(doc);
  ASSERT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(d.status().message()),
              HasSubstr("gemm.json: $.outputs.C.dtype: expected a known dtype (float32, "
                        "float16, bfloat16,"));
  EXPECT_THAT(std::string(d.status().message()), HasSubstr("found \"bf16\""));
}

TEST(DefinitionTest, AcceptsEveryCompatDtype) {
  for (const char* dtype :
       {"float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float4_e2m1",
        "int64", "int32", "int16", "int8", "bool"}) {
    auto doc = ValidDefinition();
    doc["inputs"]["A"]["dtype"] = dtype;
    EXPECT_TRUE(Parse(doc).ok()) << dtype;
  }
}

TEST(DefinitionTest, RejectsOutputNamedLikeAnInput) {
  auto doc = ValidDefinition();
  doc["outputs"]["A"] = {{"shape", {"M", "N"}}, {"dtype", "bfloat16"}};
  ExpectError(Parse(doc),
              "gemm.json: $.outputs.A: expected an output name that no input has, found \"A\"");
}

TEST(DefinitionTest, RejectsMissingRequiredFields) {
  for (const char* field :
       {"name", "op_type", "axes", "inputs", "outputs", "reference"}) {
    auto doc = ValidDefinition();
    doc.erase(field);
    ExpectError(Parse(doc),
                absl::StrCat("gemm.json: $.", field,
                             ": expected a value (the key is required), found nothing"));
  }
}

TEST(DefinitionTest, RejectsNoOutputs) {
  auto doc = ValidDefinition();
  doc["outputs"] = nlohmann::ordered_json::object();
  ExpectError(Parse(doc), "gemm.json: $.outputs: expected at least one output, found {}");
}

TEST(DefinitionTest, RejectsNameThatIsNoFileName) {
  auto doc = ValidDefinition();
  doc["name"] = "../evil";
  auto d = Parse(doc);
  ASSERT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(d.status().message()),
              HasSubstr("$.name: expected a name of [A-Za-z0-9._-]{1,128} not starting with '.', "
                        "found \"../evil\""));
}

TEST(DefinitionTest, RejectsUnknownToleranceField) {
  auto doc = ValidDefinition();
  doc["tolerance"] = {{"atoll", 1}};
  ExpectError(
      Parse(doc),
      "gemm.json: $.tolerance.atoll: expected a known key (atol, rtol, required_matched_ratio), "
      "found an unknown key");
}

TEST(DefinitionTest, RejectsMatchedRatioOutOfRange) {
  auto doc = ValidDefinition();
  doc["tolerance"] = {{"required_matched_ratio", 1.5}};
  ExpectError(Parse(doc),
              "gemm.json: $.tolerance.required_matched_ratio: expected a number in (0, 1], "
              "found 1.5");
}

TEST(DefinitionTest, RejectsNegativeTolerance) {
  auto doc = ValidDefinition();
  doc["tolerance"] = {{"rtol", -0.1}};
  ExpectError(Parse(doc),
              "gemm.json: $.tolerance.rtol: expected a number of at least 0, found -0.1");
}

TEST(DefinitionTest, RejectsNonIntegerTrials) {
  auto doc = ValidDefinition();
  doc["trials"] = 2.5;
  ExpectError(Parse(doc), "gemm.json: $.trials: expected an integer from 1 to 100, found 2.5");
}

TEST(DefinitionTest, RejectsNegativeImportance) {
  auto doc = ValidDefinition();
  doc["importance"] = -1;
  ExpectError(Parse(doc), "gemm.json: $.importance: expected a number of at least 0, found -1");
}

TEST(DefinitionTest, MalformedJsonNamesThePosition) {
  auto d = ParseDefinition("{\"name\": \"x\",\n \"op_type\" \"gemm\"}", "gemm.json");
  ASSERT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(d.status().message()),
              HasSubstr("gemm.json: line 2, column 17: malformed JSON"));
}

constexpr char kLine[] =
    R"({"definition": "gemm_small", "solution": null, "workload": {"uuid": )"
    R"("0b9f5f5e-3c4a-5d1e-8f2b-6a7c8d9e0f11", "axes": {"M": 128}, "inputs": )"
    R"({"A": {"type": "random"}, "B": {"type": "random"}, )"
    R"("alpha": {"type": "scalar", "value": 0.5}}}, "evaluation": null})";

TEST(WorkloadLineTest, ParsesAWorkload) {
  auto record = ParseWorkloadRecord(kLine, "gemm.jsonl:1");
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->definition, "gemm_small");
  const Workload& w = record->workload;
  EXPECT_EQ(w.uuid, "0b9f5f5e-3c4a-5d1e-8f2b-6a7c8d9e0f11");
  EXPECT_EQ(w.axes.at("M"), 128);
  EXPECT_EQ(w.inputs.at("A").type, "random");
  EXPECT_EQ(w.inputs.at("alpha").type, "scalar");
  EXPECT_DOUBLE_EQ(w.inputs.at("alpha").scalar_value, 0.5);
  auto plain = ParseWorkloadLine(kLine, "gemm.jsonl:1");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->uuid, w.uuid);
}

TEST(WorkloadLineTest, ParsesSafetensorsSource) {
  auto line = nlohmann::json::parse(kLine);
  line["workload"]["inputs"]["A"] = {
      {"type", "safetensors"}, {"path", "blob/a.safetensors"}, {"tensor_key", "A"}};
  auto w = ParseWorkloadLine(line.dump(), "gemm.jsonl:1");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->inputs.at("A").path, "blob/a.safetensors");
  EXPECT_EQ(w->inputs.at("A").tensor_key, "A");
}

TEST(WorkloadLineTest, AnyNonEmptyIdWithoutControlCharactersIsAnId) {
  // FlashInfer-Trace ids: dashed UUIDs, bare hex, or anything else.
  for (const char* id : {"0b9f5f5e3c4a5d1e8f2b6a7c8d9e0f11", "w1", "not-a-uuid"}) {
    auto line = nlohmann::json::parse(kLine);
    line["workload"]["uuid"] = id;
    auto w = ParseWorkloadLine(line.dump(), "gemm.jsonl:7");
    ASSERT_TRUE(w.ok()) << w.status();
    EXPECT_EQ(w->uuid, id);
  }
  for (const auto& [id, why] : std::vector<std::pair<std::string, std::string>>{
           {"", "$.workload.uuid: expected a non-empty string, found \"\""},
           {"a\nb",
            "$.workload.uuid: expected an id of 1 to 256 characters without control "
            "characters, found \"a\\nb\""}}) {
    auto line = nlohmann::json::parse(kLine);
    line["workload"]["uuid"] = id;
    auto w = ParseWorkloadLine(line.dump(), "gemm.jsonl:7");
    ASSERT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument) << id;
    EXPECT_THAT(std::string(w.status().message()), HasSubstr(why));
  }
}

TEST(WorkloadLineTest, AWorkloadMayCarryAnImportance) {
  auto w = ParseWorkloadLine(kLine, "gemm.jsonl:1");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_DOUBLE_EQ(w->importance, 1.0);
  auto line = nlohmann::json::parse(kLine);
  line["workload"]["importance"] = 0.25;
  w = ParseWorkloadLine(line.dump(), "gemm.jsonl:1");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_DOUBLE_EQ(w->importance, 0.25);
  line["workload"]["importance"] = -2;
  w = ParseWorkloadLine(line.dump(), "gemm.jsonl:4");
  ASSERT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(w.status().message()),
              HasSubstr("$.workload.importance: expected a number of at least 0, found -2"));
}

TEST(WorkloadLineTest, ScalarsKeepTheirJsonKind) {
  auto line = nlohmann::json::parse(kLine);
  line["workload"]["inputs"]["alpha"]["value"] = 3;
  auto w = ParseWorkloadLine(line.dump(), "gemm.jsonl:1");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->inputs.at("alpha").scalar_kind, InputSource::ScalarKind::kInt);
  EXPECT_EQ(w->inputs.at("alpha").scalar_int, 3);
  line["workload"]["inputs"]["alpha"]["value"] = true;
  w = ParseWorkloadLine(line.dump(), "gemm.jsonl:1");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->inputs.at("alpha").scalar_kind, InputSource::ScalarKind::kBool);
  EXPECT_EQ(w->inputs.at("alpha").scalar_int, 1);
  w = ParseWorkloadLine(kLine, "gemm.jsonl:1");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->inputs.at("alpha").scalar_kind, InputSource::ScalarKind::kFloat);
}

TEST(WorkloadLineTest, RejectsNonPositiveAxisValue) {
  auto line = nlohmann::json::parse(kLine);
  line["workload"]["axes"]["M"] = 0;
  auto w = ParseWorkloadLine(line.dump(), "gemm.jsonl:2");
  ASSERT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(w.status().message()),
            "gemm.jsonl:2: $.workload.axes.M: expected a positive integer, found 0");
}

TEST(WorkloadLineTest, RejectsUnknownSourceType) {
  auto line = nlohmann::json::parse(kLine);
  line["workload"]["inputs"]["A"]["type"] = "zeros";
  auto w = ParseWorkloadLine(line.dump(), "gemm.jsonl:3");
  ASSERT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(w.status().message()),
            "gemm.jsonl:3: $.workload.inputs.A.type: expected one of \"random\", \"scalar\", "
            "\"safetensors\", found \"zeros\"");
}

class ValidateWorkloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = Parse(ValidDefinition());
    ASSERT_TRUE(d.ok()) << d.status();
    definition_ = *d;
    auto w = ParseWorkloadLine(kLine, "gemm.jsonl:1");
    ASSERT_TRUE(w.ok()) << w.status();
    workload_ = *w;
  }
  Definition definition_;
  Workload workload_;
};

TEST_F(ValidateWorkloadTest, AcceptsMatchingWorkload) {
  EXPECT_TRUE(ValidateWorkload(definition_, workload_, "gemm.jsonl:1").ok());
  auto values = definition_.AxisValues(workload_);
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_EQ(values->at("M"), 128);
  EXPECT_EQ(values->at("N"), 64);
  EXPECT_EQ(values->at("K"), 32);
}

TEST_F(ValidateWorkloadTest, RejectsMissingVarAxis) {
  workload_.axes.erase("M");
  absl::Status s = ValidateWorkload(definition_, workload_, "gemm.jsonl:1");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(s.message()),
            "gemm.jsonl:1: $.workload.axes.M: expected a value for the var axis, found nothing");
  auto values = definition_.AxisValues(workload_);
  EXPECT_EQ(values.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(values.status().message()),
              HasSubstr("no value for var axis 'M'"));
}

TEST_F(ValidateWorkloadTest, RejectsUnknownAxis) {
  workload_.axes["Z"] = 4;
  absl::Status s = ValidateWorkload(definition_, workload_, "gemm.jsonl:1");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(s.message()),
            "gemm.jsonl:1: $.workload.axes.Z: expected only the axes of definition "
            "'gemm_small', found 4; it has no axis Z");
}

TEST_F(ValidateWorkloadTest, ConstAxisMayRepeatItsValueOnly) {
  workload_.axes["N"] = 64;
  EXPECT_TRUE(ValidateWorkload(definition_, workload_, "w").ok());
  workload_.axes["N"] = 65;
  absl::Status s = ValidateWorkload(definition_, workload_, "w");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(s.message()),
            "w: $.workload.axes.N: expected 64 (the axis is const), found 65");
}

TEST_F(ValidateWorkloadTest, RejectsUnknownAndMissingInputs) {
  InputSource random;
  random.type = "random";
  workload_.inputs["X"] = random;
  absl::Status s = ValidateWorkload(definition_, workload_, "w");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(s.message()),
            "w: $.workload.inputs.X: expected only the inputs of definition 'gemm_small', "
            "found {\"type\":\"random\"}; it has no input X");
  workload_.inputs.erase("X");
  workload_.inputs.erase("B");
  s = ValidateWorkload(definition_, workload_, "w");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(s.message()),
            "w: $.workload.inputs.B: expected a source for the input, found nothing");
}

// ---- CheckUsable: whether every input can be made exactly as specified. ----

class UsableTest : public ValidateWorkloadTest {
 protected:
  void SetUp() override {
    ValidateWorkloadTest::SetUp();
    definition_.workloads.push_back(workload_);
    dir_ = std::filesystem::path(::testing::TempDir()) /
           absl::StrCat("usable_test_", getpid(),
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  InputSource& Source(const std::string& input) {
    return definition_.workloads[0].inputs.at(input);
  }
  std::string Refusal() {
    const absl::Status s = CheckUsable(definition_);
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    return std::string(s.message());
  }
  // A: int32 [3] is wrong for every check; A: bf16 [128, 32] is right.
  std::string WriteTensorFile() {
    const std::string path = (dir_ / "a.safetensors").string();
    std::ofstream(path, std::ios::binary) << testing::PackSafetensors(
        {{"A", {{"dtype", "BF16"}, {"shape", {128, 32}}, {"data_offsets", {0, 128 * 32 * 2}}}},
         {"idx", {{"dtype", "I32"}, {"shape", {3}}, {"data_offsets", {8192, 8204}}}}},
        std::string(8204, '\0'));
    return path;
  }
  void UseFile(const std::string& path, const std::string& key) {
    InputSource& a = Source("A");
    a.type = "safetensors";
    a.path = "blob/a.safetensors";
    a.resolved_path = path;
    a.tensor_key = key;
  }

  static constexpr char kWhere[] =
      "definition gemm_small, workload 0b9f5f5e-3c4a-5d1e-8f2b-6a7c8d9e0f11, input ";
  std::filesystem::path dir_;
};

TEST_F(UsableTest, RandomAndScalarSourcesOfTheirInputsAreUsable) {
  EXPECT_TRUE(CheckUsable(definition_).ok()) << CheckUsable(definition_);
  Source("alpha").scalar_kind = InputSource::ScalarKind::kInt;
  Source("alpha").scalar_int = -3;
  Source("alpha").scalar_value = -3;
  EXPECT_TRUE(CheckUsable(definition_).ok());
}

TEST_F(UsableTest, AScalarSourceOnATensorInputIsRefused) {
  Source("A").type = "scalar";
  EXPECT_EQ(Refusal(), absl::StrCat(kWhere, "A: a \"scalar\" source gives one value, but the "
                                            "input is a tensor of shape [M, K]"));
}

TEST_F(UsableTest, AScalarMustBeAValueOfTheInputsDtype) {
  using Kind = InputSource::ScalarKind;
  struct Case {
    const char* dtype;
    Kind kind;
    double value;
    const char* refusal;  // "" when usable
  } cases[] = {
      {"float32", Kind::kBool, 1,
       "the scalar value true is a boolean, the input's dtype is float32"},
      {"bool", Kind::kBool, 1, ""},
      {"bool", Kind::kInt, 1, "the scalar value 1 is not a boolean, the input's dtype is bool"},
      {"int8", Kind::kInt, 1, ""},
      {"int8", Kind::kInt, 300, "the scalar value 300 does not fit in int8"},
      {"int8", Kind::kFloat, 0.5,
       "the scalar value 0.5 is not an integer, the input's dtype is int8"},
      {"float16", Kind::kInt, 3, ""},
      {"float16", Kind::kFloat, 1e5,
       "the scalar value 100000 is beyond the largest float16 (65504)"},
  };
  for (const Case& c : cases) {
    definition_.inputs[2].dtype = c.dtype;
    InputSource& alpha = Source("alpha");
    alpha.scalar_kind = c.kind;
    alpha.scalar_value = c.value;
    alpha.scalar_int = static_cast<int64_t>(c.value);
    const absl::Status s = CheckUsable(definition_);
    EXPECT_EQ(std::string(s.message()),
              *c.refusal == '\0' ? "" : absl::StrCat(kWhere, "alpha: ", c.refusal))
        << c.dtype << " " << c.value;
  }
}

TEST_F(UsableTest, ASafetensorsTensorOfTheDeclaredDtypeAndShapeIsUsable) {
  UseFile(WriteTensorFile(), "A");
  EXPECT_TRUE(CheckUsable(definition_).ok()) << CheckUsable(definition_);
}

TEST_F(UsableTest, ASafetensorsRefusalNamesTheFileAndWhatDiffers) {
  const std::string path = WriteTensorFile();
  UseFile(path, "idx");
  EXPECT_EQ(Refusal(), absl::StrCat(kWhere, "A: ", path,
                                    ": tensor \"idx\" is I32, the definition declares bfloat16"));
  definition_.workloads[0].axes["M"] = 64;
  UseFile(path, "A");
  EXPECT_EQ(Refusal(), absl::StrCat(kWhere, "A: ", path,
                                    ": tensor \"A\" has shape [128, 32], the workload needs "
                                    "[64, 32]"));
  UseFile(path, "B");
  EXPECT_EQ(Refusal(), absl::StrCat(kWhere, "A: ", path, ": no tensor \"B\" (it has: A, idx)"));
  UseFile(path + ".missing", "A");
  EXPECT_EQ(Refusal(), absl::StrCat(kWhere, "A: ", path, ".missing: cannot be read"));
  UseFile("", "A");
  EXPECT_EQ(Refusal(), absl::StrCat(kWhere, "A: safetensors path blob/a.safetensors was not "
                                            "resolved against a dataset root"));
}

TEST_F(UsableTest, ADtypeTheHarnessLacksIsRefusedForInputsAndOutputs) {
  definition_.inputs[1].dtype = "float4_e2m1";
  EXPECT_EQ(Refusal(),
            "definition gemm_small, input B: dtype float4_e2m1 is not supported by the GPU "
            "harness yet");
  definition_.inputs[1].dtype = "bfloat16";
  definition_.outputs[0].dtype = "float4_e2m1";
  EXPECT_EQ(Refusal(),
            "definition gemm_small, output C: dtype float4_e2m1 is not supported by the GPU "
            "harness yet");
}

}  // namespace
}  // namespace ptxbench::workloads

namespace ptxbench::workloads {
namespace {

TEST(ScalarJsonTest, TheDatasetsValueExactlyAndShort) {
  InputSource s;
  s.type = "scalar";
  for (double v : {0.1, 1e-06, 1e-5, 100000.0, 1.0 / 3}) {
    s.scalar_value = v;
    EXPECT_EQ(std::strtod(ScalarJson(s).c_str(), nullptr), v) << ScalarJson(s);
  }
  s.scalar_value = 0.1;
  EXPECT_EQ(ScalarJson(s), "0.1");
  s.scalar_value = 1e-06;
  EXPECT_EQ(ScalarJson(s), "1e-06");
  s.scalar_kind = InputSource::ScalarKind::kInt;
  s.scalar_int = -3;
  EXPECT_EQ(ScalarJson(s), "-3");
  s.scalar_kind = InputSource::ScalarKind::kBool;
  s.scalar_int = 1;
  EXPECT_EQ(ScalarJson(s), "true");
}

}  // namespace
}  // namespace ptxbench::workloads
