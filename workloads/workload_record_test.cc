#include "workloads/workload_record.h"

#include <gtest/gtest.h>

#include <string>

#include "workloads/definition.h"
#include "workloads/registry.h"

namespace ptxbench::workloads {
namespace {

// Parses `line`, writes it back, and parses that again.
WorkloadRecord RoundTrip(const std::string& line) {
  auto first = ParseWorkloadRecord(line, "w.jsonl:1");
  EXPECT_TRUE(first.ok()) << first.status();
  const std::string written = FormatWorkloadRecord(first->definition, first->workload);
  auto second = ParseWorkloadRecord(written, "written");
  EXPECT_TRUE(second.ok()) << second.status() << "\n" << written;
  EXPECT_EQ(FormatWorkloadRecord(second->definition, second->workload), written)
      << "writing is not stable";
  return *second;
}

TEST(WorkloadRecordTest, RoundTripsEverySourceKind) {
  const WorkloadRecord r = RoundTrip(R"({"definition": "d", "solution": null,
    "workload": {"uuid": "u-1", "axes": {"M": 70, "B": 3},
      "inputs": {"A": {"type": "random"},
                 "n": {"type": "scalar", "value": 7},
                 "scale": {"type": "scalar", "value": 0.1},
                 "two": {"type": "scalar", "value": 2.0},
                 "tiny": {"type": "scalar", "value": 1e-300},
                 "flag": {"type": "scalar", "value": true},
                 "W": {"type": "safetensors", "path": "blob/w.safetensors", "tensor_key": "w"}}},
    "evaluation": null})");
  EXPECT_EQ(r.definition, "d");
  EXPECT_EQ(r.workload.uuid, "u-1");
  EXPECT_EQ(r.workload.axes.at("M"), 70);
  EXPECT_EQ(r.workload.axes.at("B"), 3);
  const auto& in = r.workload.inputs;
  EXPECT_EQ(in.at("A").type, "random");
  EXPECT_EQ(in.at("n").scalar_kind, InputSource::ScalarKind::kInt);
  EXPECT_EQ(in.at("n").scalar_int, 7);
  EXPECT_EQ(in.at("scale").scalar_kind, InputSource::ScalarKind::kFloat);
  EXPECT_EQ(in.at("scale").scalar_value, 0.1);
  // An integral float stays a float.
  EXPECT_EQ(in.at("two").scalar_kind, InputSource::ScalarKind::kFloat);
  EXPECT_EQ(in.at("two").scalar_value, 2.0);
  EXPECT_EQ(in.at("tiny").scalar_value, 1e-300);
  EXPECT_EQ(in.at("flag").scalar_kind, InputSource::ScalarKind::kBool);
  EXPECT_EQ(in.at("flag").scalar_int, 1);
  EXPECT_EQ(in.at("W").type, "safetensors");
  EXPECT_EQ(in.at("W").path, "blob/w.safetensors");
  EXPECT_EQ(in.at("W").tensor_key, "w");
}

TEST(WorkloadRecordTest, WritesTheFlashInferShape) {
  Workload w;
  w.uuid = "u";
  w.axes["M"] = 8;
  w.inputs["A"].type = "random";
  EXPECT_EQ(FormatWorkloadRecord("gemm", w),
            R"({"definition":"gemm","solution":null,"workload":{"uuid":"u","axes":{"M":8},)"
            R"("inputs":{"A":{"type":"random"}}},"evaluation":null})");
}

TEST(WorkloadRecordTest, NeverWritesTheResolvedPath) {
  Workload w;
  w.uuid = "u";
  InputSource& s = w.inputs["W"];
  s.type = "safetensors";
  s.path = "blob/w.safetensors";
  s.tensor_key = "w";
  s.resolved_path = "/data/set/blob/w.safetensors";
  EXPECT_EQ(FormatWorkloadRecord("d", w).find("/data/set"), std::string::npos);
}

// Every bundled workload reads back as the same workload.
TEST(WorkloadRecordTest, RoundTripsTheBundledWorkloads) {
  auto registry = DefinitionRegistry::Load({});
  ASSERT_TRUE(registry.ok()) << registry.status();
  int count = 0;
  for (const Definition* d : (*registry)->List()) {
    for (const Workload& w : d->workloads) {
      const std::string line = FormatWorkloadRecord(d->name, w);
      auto back = ParseWorkloadRecord(line, "written");
      ASSERT_TRUE(back.ok()) << back.status();
      EXPECT_EQ(back->definition, d->name);
      EXPECT_EQ(back->workload.uuid, w.uuid);
      EXPECT_EQ(back->workload.axes, w.axes);
      ASSERT_EQ(back->workload.inputs.size(), w.inputs.size());
      for (const auto& [name, source] : w.inputs) {
        EXPECT_EQ(back->workload.inputs.at(name).type, source.type) << name;
      }
      EXPECT_TRUE(ValidateWorkload(*d, back->workload, "written").ok());
      ++count;
    }
  }
  EXPECT_GT(count, 0);
}

}  // namespace
}  // namespace ptxbench::workloads
