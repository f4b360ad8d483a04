#include "worker/runner/harness/prepared_workload.h"

#include <unistd.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/status_macros.h"
#include "worker/gpu/timing.h"
#include "worker/runner/measure/workload_trace.h"

namespace ptxbench::runner {

namespace v1 = ::ptxbench::v1;

PreparedWorkload PrepareWorkload(const RunnerJob& job, const workloads::Definition& definition,
                                 size_t index, bool use_torch, TorchHostLink* torch_link,
                                 absl::StatusOr<std::vector<FixedValue>>& fixed) {
  const WorkloadSpec& spec = job.workloads[index];
  PreparedWorkload w;
  if (!fixed.ok()) {
    w.error = absl::StrCat("the workload's inputs: ", fixed.status().message());
    return w;
  }
  const absl::Time start = absl::Now();
  if (!use_torch || job.compare_references) {
    absl::StatusOr<std::unique_ptr<Reference>> ref = MakeReference(definition, spec.axes);
    if (!ref.ok()) {
      w.error = std::string(ref.status().message());
      return w;
    }
    (use_torch ? w.native : w.reference) = *std::move(ref);
  }
  if (use_torch) {
    w.reference = std::make_unique<TorchReference>(torch_link, index,
                                                   WorkloadRequest(definition, spec, {}));
  }
  const absl::Time made = absl::Now();
  w.reference_setup_s = absl::ToDoubleSeconds(made - start);
  absl::StatusOr<WorkloadBuffers> b = WorkloadBuffers::Allocate(definition, spec.axes, use_torch);
  w.allocation_s = absl::ToDoubleSeconds(absl::Now() - made);
  if (!b.ok()) {
    w.error = std::string(b.status().message());
    return w;
  }
  w.buffers.emplace(*std::move(b));
  for (const FixedValue& f : *fixed) {
    if (absl::Status s = w.buffers->Fix(f.index, f.bytes); !s.ok()) {
      w.error = absl::StrCat("the workload's inputs: ", s.message());
      break;
    }
  }
  fixed->clear();  // on the GPU now
  return w;
}

protocol::Request WorkloadRequest(const workloads::Definition& definition,
                                  const WorkloadSpec& workload,
                                  const std::vector<protocol::TensorMeta>& tensors) {
  protocol::Request r{protocol::Op::kWorkload};
  r.axes = workload.axes;
  r.tensors = tensors;
  r.num_inputs = static_cast<int>(definition.inputs.size());
  for (const FixedInput& f : workload.fixed) {
    if (f.path.empty()) r.scalars[f.name] = f.scalar_json;
  }
  return r;
}

absl::StatusOr<protocol::Reply> SendWorkload(HostChannel& host,
                                             const workloads::Definition& definition,
                                             const WorkloadSpec& workload,
                                             const WorkloadBuffers& buffers,
                                             absl::Duration timeout) {
  absl::StatusOr<WorkloadBuffers::Exported> shared = buffers.Export();
  if (!shared.ok()) {
    return absl::InternalError(absl::StrCat("sharing the buffers: ", shared.status().message()));
  }
  absl::StatusOr<protocol::Reply> reply =
      host.Ask(WorkloadRequest(definition, workload, shared->tensors), timeout,
               shared->descriptors);
  for (int fd : shared->descriptors) close(fd);
  return reply;
}

v1::WorkloadTrace ReferenceFiguresTrace(const WorkloadSpec& workload, const PreparedWorkload& w) {
  v1::WorkloadTrace t;
  SetIdentity(t, workload);
  t.set_status(w.error.empty() ? v1::PASSED : v1::INFRA_ERROR);
  if (!w.error.empty()) t.add_errors(w.error);
  t.set_reference_latency_ms(w.reference_ms);
  if (w.reference != nullptr) t.set_reference(w.reference->Name());
  t.set_log(w.reference_log);
  return t;
}

namespace {

// One trial of CompareReferencesTrace: fresh inputs, the native outputs as
// the expected ones, the PyTorch outputs into set 0, checked.
absl::StatusOr<CallCheck> CompareOnce(PreparedWorkload& w, uint64_t seed,
                                      const reference::Tolerance& tol, cudaStream_t stream) {
  PTXB_RETURN_IF_ERROR(w.buffers->Prepare(*w.native, seed, /*expected=*/true, stream));
  PTXB_RETURN_IF_ERROR(w.buffers->Stage(0, stream));
  PTXB_RETURN_IF_ERROR(w.reference->Run(w.buffers->inputs(0), w.buffers->outputs(0), stream));
  PTXB_RETURN_IF_ERROR(w.buffers->EnqueueChecks(0, tol, stream));
  PTXB_RETURN_IF_ERROR(gpu::CudaStatus(cudaStreamSynchronize(stream), "the checks"));
  return w.buffers->ReadChecks(0, tol);
}

}  // namespace

v1::WorkloadTrace CompareReferencesTrace(const WorkloadSpec& workload, PreparedWorkload& w,
                                         uint64_t seed, int trials,
                                         const reference::Tolerance& tol, cudaStream_t stream) {
  v1::WorkloadTrace t;
  SetIdentity(t, workload);
  t.set_reference_latency_ms(w.reference_ms);
  t.set_status(v1::PASSED);
  std::string log = w.reference_log;
  for (int trial = 0; w.error.empty() && trial < trials; ++trial) {
    absl::StatusOr<CallCheck> check =
        CompareOnce(w, CallSeed(seed, workload.uuid, "compare", trial, 0), tol, stream);
    if (!check.ok()) {
      w.error = absl::StrCat("comparing the references: ", check.status().message());
      break;
    }
    NoteCheck(*check, trial == 0, &t);
    absl::StrAppendFormat(&log, "trial %d: max abs %g, max rel %g, matched %.6f\n", trial,
                          check->max_abs_error, check->max_rel_error, check->matched_ratio);
    if (!check->passed) {
      t.set_status(v1::INCORRECT_NUMERICAL);
      for (const std::string& e : check->errors) t.add_errors(e);
      break;
    }
  }
  if (!w.error.empty()) {
    t.set_status(v1::INFRA_ERROR);
    t.add_errors(w.error);
  }
  t.set_reference(
      absl::StrCat("PyTorch, checked against ", w.native ? w.native->Name() : "none"));
  t.set_log(log);
  return t;
}

}  // namespace ptxbench::runner
