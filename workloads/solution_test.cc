#include "workloads/solution.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "workloads/testing/triton_solution.h"

namespace ptxbench::workloads {
namespace {

using ::testing::HasSubstr;

// A two-file CUDA solution in the TVM-FFI style; tests change one field.
nlohmann::ordered_json ValidSolution() {
  return nlohmann::ordered_json::parse(R"({
    "name": "tiled_gemm", "definition": "gemm_n7168_k5120", "author": "me",
    "spec": {"language": "cuda", "target_hardware": ["H100"],
             "entry_point": "gemm.cu::run", "dependencies": [],
             "destination_passing_style": true},
    "sources": [{"path": "include/tile.h", "content": "#pragma once\n"},
                {"path": "gemm.cu", "content": "#include \"include/tile.h\"\n"}],
    "description": "unknown fields are fine"
  })");
}

absl::StatusOr<Solution> Parse(const nlohmann::ordered_json& doc) {
  return ParseSolution(doc.dump(), "sol.json");
}

TEST(SolutionTest, ParsesEveryField) {
  auto s = Parse(ValidSolution());
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->name, "tiled_gemm");
  EXPECT_EQ(s->definition, "gemm_n7168_k5120");
  EXPECT_EQ(s->language, "cuda");
  EXPECT_EQ(s->entry_file, "gemm.cu");
  EXPECT_EQ(s->entry_symbol, "run");
  EXPECT_TRUE(s->destination_passing_style);
  EXPECT_EQ(s->binding, "");
  ASSERT_EQ(s->sources.size(), 2u);
  EXPECT_EQ(s->sources[0].path, "include/tile.h");
  EXPECT_TRUE(CheckSolutionSupported(*s).ok());
  EXPECT_TRUE(LooksLikeSolution(ValidSolution().dump()));
  EXPECT_FALSE(LooksLikeSolution("#include <cuda.h>\n"));
}

TEST(SolutionTest, SourcePathsStayInsideTheBuildFolder) {
  for (const char* bad : {"/etc/passwd", "../x.cu", "a/../../x.cu", "./x.cu", "a//b.cu", "x y.cu",
                          "trampoline.cpp"}) {
    auto doc = ValidSolution();
    doc["sources"][1]["path"] = bad;
    doc["spec"]["entry_point"] = std::string(bad) + "::run";
    auto s = Parse(doc);
    ASSERT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(s.status().message()),
                HasSubstr("sol.json: $.sources[1].path: expected a "))
        << bad;
  }
}

TEST(SolutionTest, TheEntryPointNamesASourceAndAFunction) {
  auto doc = ValidSolution();
  doc["spec"]["entry_point"] = "main.cu::run";
  EXPECT_THAT(std::string(Parse(doc).status().message()),
              HasSubstr("$.spec.entry_point: expected a file among the sources (gemm.cu, "
                        "include/tile.h), found \"main.cu::run\""));
  doc["spec"]["entry_point"] = "gemm.cu";
  EXPECT_THAT(std::string(Parse(doc).status().message()),
              HasSubstr("expected \"<file>::<function>\", found \"gemm.cu\""));
}

TEST(SolutionTest, RepeatedPathsAndMissingFieldsAreRefused) {
  auto doc = ValidSolution();
  doc["sources"][0]["path"] = "gemm.cu";
  EXPECT_THAT(
      std::string(Parse(doc).status().message()),
      HasSubstr("$.sources[1].path: expected a path no other source has, found \"gemm.cu\""));
  doc = ValidSolution();
  doc.erase("author");
  EXPECT_THAT(std::string(Parse(doc).status().message()),
              HasSubstr("$.author: expected a value (the key is required), found nothing"));
  doc = ValidSolution();
  doc["sources"] = nlohmann::ordered_json::array();
  EXPECT_FALSE(Parse(doc).ok());
}

// A Triton solution as PTXBench's test scripts write it (multiturn/tests/
// triton/*.py): read, and evaluated as its kernel.py; any other shape is
// refused naming the field, never run as something else.
TEST(SolutionTest, ATritonSolutionIsItsKernelPy) {
  const std::string kernel = testing::TritonModule();
  const nlohmann::ordered_json doc =
      nlohmann::ordered_json::parse(testing::TritonSolution().dump());
  auto s = ParseSolution(doc.dump(), "triton.json");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->language, "triton");
  EXPECT_TRUE(LooksLikeSolution(doc.dump()));
  auto module = TritonModuleOf(*s);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(*module, kernel);
  // Not a CUDA solution: the CUDA build refuses it, saying where it goes.
  EXPECT_THAT(std::string(CheckSolutionSupported(*s).message()),
              HasSubstr("is not supported as a CUDA solution: a Triton solution is evaluated as "
                        "its kernel.py"));

  struct Case {
    std::function<void(nlohmann::ordered_json&)> change;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {[](auto& d) { d["spec"]["entry_point"] = "kernel.py::main"; },
            "spec.entry_point \"kernel.py::main\" is not \"<file>.py::run\""},
           {[](auto& d) {
              d["sources"].push_back({{"path", "util.py"}, {"content", "x = 1\n"}});
            },
            "2 sources; a Triton solution is one Python module"},
           {[](auto& d) { d["spec"]["destination_passing_style"] = false; },
            "spec.destination_passing_style false"},
           {[](auto& d) { d["spec"]["binding"] = "torch"; }, "spec.binding \"torch\""},
           {[](auto& d) { d["spec"]["language"] = "cuda"; },
            "spec.language \"cuda\" is not \"triton\""}}) {
    nlohmann::ordered_json changed = doc;
    c.change(changed);
    auto parsed = ParseSolution(changed.dump(), "triton.json");
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    auto refused = TritonModuleOf(*parsed);
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnimplemented) << c.message;
    EXPECT_THAT(std::string(refused.status().message()), HasSubstr(c.message));
  }
}

TEST(SolutionTest, UnsupportedFormsAreRefusedNamingTheField) {
  struct Case {
    const char* field;
    nlohmann::ordered_json value;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {"language", "triton", "spec.language \"triton\" is not supported"},
           {"binding", "torch", "spec.binding \"torch\" is not supported"},
           {"destination_passing_style", false, "spec.destination_passing_style false"}}) {
    auto doc = ValidSolution();
    doc["spec"][c.field] = c.value;
    auto s = Parse(doc);
    ASSERT_TRUE(s.ok()) << s.status();
    absl::Status supported = CheckSolutionSupported(*s);
    EXPECT_EQ(supported.code(), absl::StatusCode::kUnimplemented) << c.field;
    EXPECT_THAT(std::string(supported.message()), HasSubstr(c.message));
  }
  auto doc = ValidSolution();
  doc["sources"][1]["path"] = "gemm.cuh";
  doc["spec"]["entry_point"] = "gemm.cuh::run";
  auto s = Parse(doc);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_THAT(std::string(CheckSolutionSupported(*s).message()), HasSubstr("no source to compile"));
}

}  // namespace
}  // namespace ptxbench::workloads
