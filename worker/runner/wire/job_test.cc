#include "worker/runner/wire/job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ptxbench::runner {
namespace {

RunnerJob SampleJob() {
  RunnerJob job;
  job.artifact = "/cache/abc/kernel.cubin";
  job.language = "ptx";
  job.launch_spec = "{\"entry\": \"k\"}";
  job.definition_json = "{\"name\": \"d\"}";
  job.workloads = {{"u1", {{"M", 70}, {"N", 7168}}, {}}, {"u2", {{"M", 8192}, {"N", 7168}}, {}}};
  job.workloads[1].fixed = {{"eps", "1e-06", "", ""}, {"W", "", "/data/blob/w.safetensors", "w"}};
  job.reference = ReferenceChoice::kPyTorch;
  job.torch = {"/opt/torch/bin/python3", "/opt/ptxbench/torch_host.py",
               "/opt/ptxbench/libptxbench-host.so"};
  job.seed = 18446744073709551615ull;  // the full uint64 range survives JSON
  job.seed_fixed = true;
  job.trials = 3;
  job.warmup_calls = 2;
  job.timed_calls = 5;
  job.isolation.candidate_host = "/opt/ptxbench/ptxbench-candidate-host";
  job.isolation.uid = 61000;
  job.isolation.candidate_uid = 65003;
  job.isolation.memory_bytes = uint64_t{3} << 30;
  job.isolation.disk_bytes = uint64_t{64} << 20;
  job.isolation.cpus = 1.5;
  job.isolation.cpu_seconds = 1200;
  job.isolation.cgroup_parent = "/sys/fs/cgroup/ptxbench";
  job.isolation.device_minor = 3;
  return job;
}

TEST(RunnerJob, RoundTrips) {
  absl::StatusOr<RunnerJob> back = ParseJob(SerializeJob(SampleJob()));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->artifact, "/cache/abc/kernel.cubin");
  EXPECT_EQ(back->language, "ptx");
  EXPECT_EQ(back->launch_spec, "{\"entry\": \"k\"}");
  EXPECT_EQ(back->definition_json, "{\"name\": \"d\"}");
  ASSERT_EQ(back->workloads.size(), 2u);
  EXPECT_EQ(back->workloads[1].uuid, "u2");
  EXPECT_EQ(back->workloads[1].axes.at("M"), 8192);
  EXPECT_EQ(back->seed, 18446744073709551615ull);
  EXPECT_TRUE(back->seed_fixed);
  EXPECT_EQ(back->trials, 3);
  EXPECT_EQ(back->warmup_calls, 2);
  EXPECT_EQ(back->timed_calls, 5);
  EXPECT_EQ(back->isolation.candidate_host, "/opt/ptxbench/ptxbench-candidate-host");
  EXPECT_EQ(back->isolation.uid, 61000u);
  EXPECT_EQ(back->isolation.candidate_uid, 65003u);
  EXPECT_EQ(back->isolation.memory_bytes, uint64_t{3} << 30);
  EXPECT_EQ(back->isolation.disk_bytes, uint64_t{64} << 20);
  EXPECT_EQ(back->isolation.cpus, 1.5);
  EXPECT_EQ(back->isolation.cpu_seconds, 1200u);
  EXPECT_EQ(back->isolation.cgroup_parent, "/sys/fs/cgroup/ptxbench");
  EXPECT_EQ(back->isolation.device_minor, 3);
  EXPECT_EQ(back->isolation.call_deadline_s, 60);
  EXPECT_TRUE(back->workloads[0].fixed.empty());
  ASSERT_EQ(back->workloads[1].fixed.size(), 2u);
  EXPECT_EQ(back->workloads[1].fixed[0].name, "eps");
  EXPECT_EQ(back->workloads[1].fixed[0].scalar_json, "1e-06");
  EXPECT_EQ(back->workloads[1].fixed[1].path, "/data/blob/w.safetensors");
  EXPECT_EQ(back->workloads[1].fixed[1].tensor_key, "w");
  EXPECT_EQ(back->reference, ReferenceChoice::kPyTorch);
  EXPECT_EQ(back->torch.python, "/opt/torch/bin/python3");
  EXPECT_EQ(back->torch.script, "/opt/ptxbench/torch_host.py");
  EXPECT_EQ(back->torch.library, "/opt/ptxbench/libptxbench-host.so");
}

TEST(RunnerJob, AProfileJobRoundTripsAndRunsExactlyOneWorkload) {
  RunnerJob job = SampleJob();
  EXPECT_TRUE(ParseJob(SerializeJob(job))->profile.ncu.empty());
  job.workloads.resize(1);
  job.profile.ncu = "/usr/local/cuda/bin/ncu";
  job.profile.launch_count = 7;
  absl::StatusOr<RunnerJob> back = ParseJob(SerializeJob(job));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->profile.ncu, "/usr/local/cuda/bin/ncu");
  EXPECT_EQ(back->profile.launch_count, 7);
  job.workloads = SampleJob().workloads;
  EXPECT_THAT(std::string(ParseJob(SerializeJob(job)).status().message()),
              testing::HasSubstr("a profile runs one workload"));
}

TEST(RunnerJob, ASanitizeJobRoundTripsAndRunsExactlyOneUnprofiledWorkload) {
  RunnerJob job = SampleJob();
  EXPECT_TRUE(ParseJob(SerializeJob(job))->sanitize.sanitizer.empty());
  job.workloads.resize(1);
  job.sanitize.sanitizer = "/usr/local/cuda/bin/compute-sanitizer";
  job.sanitize.sanitizer_root = "/usr/local/cuda/compute-sanitizer";
  job.sanitize.print_limit = 100;
  job.sanitize.debug = true;
  absl::StatusOr<RunnerJob> back = ParseJob(SerializeJob(job));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->sanitize.sanitizer, "/usr/local/cuda/bin/compute-sanitizer");
  EXPECT_EQ(back->sanitize.sanitizer_root, "/usr/local/cuda/compute-sanitizer");
  EXPECT_EQ(back->sanitize.print_limit, 100);
  EXPECT_TRUE(back->sanitize.debug);
  RunnerJob two = job;
  two.workloads = SampleJob().workloads;
  EXPECT_THAT(std::string(ParseJob(SerializeJob(two)).status().message()),
              testing::HasSubstr("a sanitize run runs one workload"));
  RunnerJob profiled = job;
  profiled.profile.ncu = "/usr/local/cuda/bin/ncu";
  EXPECT_EQ(ParseJob(SerializeJob(profiled)).status().code(), absl::StatusCode::kInvalidArgument);
  RunnerJob no_limit = job;
  no_limit.sanitize.print_limit = 0;
  EXPECT_EQ(ParseJob(SerializeJob(no_limit)).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(RunnerJob, KnownReferencesRoundTripAndAreNeverABenchmarksInput) {
  RunnerJob job = SampleJob();
  job.known_references = {{"u1", "cuBLAS", 0.0393, "reference cuBLAS trial 0: ...\n"}};
  absl::StatusOr<RunnerJob> back = ParseJob(SerializeJob(job));
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->known_references.size(), 1u);
  EXPECT_EQ(back->known_references[0].workload_uuid, "u1");
  EXPECT_EQ(back->known_references[0].name, "cuBLAS");
  EXPECT_DOUBLE_EQ(back->known_references[0].ms, 0.0393);
  EXPECT_EQ(back->known_references[0].log, "reference cuBLAS trial 0: ...\n");
  // A benchmark times the reference itself.
  job.reference_only = true;
  EXPECT_FALSE(ParseJob(SerializeJob(job)).ok());
  // A figure that is no time at all is refused, not used.
  job = SampleJob();
  job.known_references = {{"u1", "cuBLAS", -1, ""}};
  EXPECT_THAT(std::string(ParseJob(SerializeJob(job)).status().message()),
              testing::HasSubstr("malformed known_references"));
}

TEST(RunnerJob, RejectsMalformedJobs) {
  EXPECT_FALSE(ParseJob("not json").ok());
  EXPECT_FALSE(ParseJob("{\"artifact\": \"x\"}").ok());
  RunnerJob job = SampleJob();
  job.workloads.clear();
  EXPECT_FALSE(ParseJob(SerializeJob(job)).ok());
  job = SampleJob();
  job.timed_calls = 0;
  EXPECT_FALSE(ParseJob(SerializeJob(job)).ok());
  job = SampleJob();
  job.calibration_survey = true;  // a benchmark's, never an evaluation's
  EXPECT_FALSE(ParseJob(SerializeJob(job)).ok());
  job.reference_only = true;
  EXPECT_TRUE(ParseJob(SerializeJob(job)).ok());
  job = SampleJob();
  job.calls_per_bracket = 4;  // also a benchmark's
  EXPECT_FALSE(ParseJob(SerializeJob(job)).ok());
  job.reference_only = true;
  EXPECT_TRUE(ParseJob(SerializeJob(job)).ok());
  job.calls_per_bracket = 0;
  EXPECT_FALSE(ParseJob(SerializeJob(job)).ok());
  std::string text = SerializeJob(SampleJob());
  text.replace(text.find("\"pytorch\""), 9, "\"triton\"");
  absl::StatusOr<RunnerJob> unknown = ParseJob(text);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown reference \"triton\""), std::string::npos);
}

TEST(RunnerOutput, KeepsFinishedTracesAndNamesTheUnfinishedWorkload) {
  ptxbench::v1::WorkloadTrace a;
  a.set_workload_uuid("u1");
  a.set_status(ptxbench::v1::PASSED);
  a.set_latency_ms(0.75);
  (*a.mutable_axes())["M"] = 70;
  std::string text = StartedLine("u1") + TraceLine(a) + StartedLine("u2");
  text += "{\"trace\": {\"workloadUu";  // cut short by a crash
  RunnerOutput out = ParseRunnerOutput(text);
  ASSERT_EQ(out.traces.size(), 1u);
  EXPECT_EQ(out.traces[0].workload_uuid(), "u1");
  EXPECT_EQ(out.traces[0].status(), ptxbench::v1::PASSED);
  EXPECT_DOUBLE_EQ(out.traces[0].latency_ms(), 0.75);
  EXPECT_EQ(out.traces[0].axes().at("M"), 70);
  EXPECT_EQ(out.unfinished, "u2");
}

TEST(RunnerOutput, CollectsTheReferenceLinesAndSkipsMalformedOnes) {
  ptxbench::v1::WorkloadTrace a;
  a.set_workload_uuid("u1");
  std::string text = ReferenceLine({"u1", "cuBLAS", 0.75, "log\n"}) +
                     "{\"reference\": {\"workload_uuid\": \"u2\", \"name\": \"x\", \"ms\": 0, "
                     "\"log\": \"\"}}\n" +
                     StartedLine("u1") + TraceLine(a);
  RunnerOutput out = ParseRunnerOutput(text);
  ASSERT_EQ(out.references.size(), 1u);
  EXPECT_EQ(out.references[0].workload_uuid, "u1");
  EXPECT_EQ(out.references[0].name, "cuBLAS");
  EXPECT_DOUBLE_EQ(out.references[0].ms, 0.75);
  EXPECT_EQ(out.references[0].log, "log\n");
  EXPECT_EQ(out.traces.size(), 1u);
}

TEST(RunnerOutput, NothingUnfinishedAfterTheLastTrace) {
  ptxbench::v1::WorkloadTrace a;
  a.set_workload_uuid("u1");
  RunnerOutput out = ParseRunnerOutput(StartedLine("u1") + TraceLine(a));
  EXPECT_EQ(out.unfinished, "");
  EXPECT_TRUE(ParseRunnerOutput("").traces.empty());
}

TEST(UsesPyTorch, TheJobsChoiceOrTheDefinitionsReference) {
  workloads::Definition d;
  d.name = "no_torch";
  RunnerJob job;
  job.reference = ReferenceChoice::kNative;
  EXPECT_EQ(UsesPyTorch(job, d).value_or(true), false);
  // Asked for PyTorch (or a comparison with it) without a PyTorch reference:
  // an error naming the definition, not a silent native run.
  job.reference = ReferenceChoice::kPyTorch;
  absl::StatusOr<bool> torch = UsesPyTorch(job, d);
  ASSERT_FALSE(torch.ok());
  EXPECT_NE(torch.status().message().find("no_torch has no PyTorch reference"), std::string::npos);
  job.reference = ReferenceChoice::kNative;
  job.compare_references = true;
  EXPECT_FALSE(UsesPyTorch(job, d).ok());
  d.reference = "def run(a): return a";
  EXPECT_EQ(UsesPyTorch(job, d).value_or(false), true);
}

}  // namespace
}  // namespace ptxbench::runner
