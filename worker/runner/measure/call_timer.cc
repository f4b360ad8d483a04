#include "worker/runner/measure/call_timer.h"

#include <unistd.h>

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "worker/gpu/sample_stats.h"
#include "worker/runner/measure/checks.h"
#include "worker/runner/measure/progress.h"

namespace ptxbench::runner {
namespace {

using protocol::Op;
using protocol::Reply;
using protocol::Request;

// How long the gate waits for a host to enqueue a call before opening anyway.
constexpr absl::Duration kGatePatience = absl::Milliseconds(5);
// Calibration: a kernel of known duration, warm-up then measured calls.
constexpr int64_t kCalibrationSpinNs = 20000;
constexpr int kCalibrationWarmup = 10;
constexpr int kCalibrationCalls = 60;
constexpr size_t kMaxReplyBytes = 1 << 16;
constexpr absl::Duration kSetupTimeout = absl::Seconds(60);

}  // namespace

absl::Status ToStatus(const CallResult& r) {
  if (r.end == CallEnd::kOk) return absl::OkStatus();
  return absl::InternalError(r.message);
}

HostChannel::~HostChannel() { close(fd_); }

absl::Status HostChannel::Send(const Request& r, const std::vector<int>& descriptors) {
  return protocol::SendMessage(fd_, protocol::EncodeRequest(r), descriptors);
}

absl::StatusOr<Reply> HostChannel::Receive(absl::Duration timeout) {
  absl::StatusOr<std::string> m = protocol::ReceiveMessage(fd_, timeout, kMaxReplyBytes);
  if (!m.ok()) return m.status();
  return protocol::DecodeReply(*m);
}

absl::StatusOr<Reply> HostChannel::Ask(const Request& r, absl::Duration timeout,
                                       const std::vector<int>& descriptors) {
  PTXB_RETURN_IF_ERROR(Send(r, descriptors));
  return Receive(timeout);
}

absl::StatusOr<std::unique_ptr<CallTimer>> CallTimer::Create(cudaStream_t stream,
                                                             absl::Duration call_deadline) {
  auto t = std::unique_ptr<CallTimer>(new CallTimer);
  t->call_deadline_ = call_deadline;
  PTXB_ASSIGN_OR_RETURN(t->flusher_, gpu::L2Flusher::Create());
  PTXB_ASSIGN_OR_RETURN(t->bracket_, Bracket::Create(stream));
  // What a call launches behind its gate, loaded before the first gate.
  PTXB_RETURN_IF_ERROR(LoadCheckKernels(stream));
  return t;
}

CallResult CallTimer::Call(HostChannel& host, const Request& request,
                         const std::function<absl::Status(cudaStream_t)>& stage,
                         const std::function<absl::Status(cudaStream_t)>& after) {
  CallResult r;
  At("call: open");
  if (stream_stuck_) return {CallEnd::kInfra, "the harness's stream is held by an unfinished call"};
  absl::Status s = bracket_->Open([&](cudaStream_t st) -> absl::Status {
    PTXB_RETURN_IF_ERROR(stage(st));
    return flusher_->FlushAsync(st);
  });
  if (!s.ok()) {
    (void)bracket_->Abandon(call_deadline_);
    return {CallEnd::kInfra, std::string(s.message())};
  }
  auto abandon = [&](CallEnd end, std::string message) {
    if (!bracket_->Abandon(call_deadline_).ok()) stream_stuck_ = true;
    return CallResult{end, std::move(message)};
  };
  At("call: send");
  Request numbered = request;
  numbered.generation = bracket_->generation();
  if (!host.Send(numbered).ok()) return abandon(CallEnd::kGone, host.WhyGone());
  At("call: wait for enqueued");
  absl::StatusOr<Reply> enqueued = host.Receive(kGatePatience);
  if (!enqueued.ok() && absl::IsDeadlineExceeded(enqueued.status())) {
    // The call synchronizes on its own stream, held behind the gate.
    r.gate_forced = true;
    bracket_->ReleaseGate();
    enqueued = host.Receive(call_deadline_);
  }
  if (!enqueued.ok()) {
    if (absl::IsDeadlineExceeded(enqueued.status())) {
      return abandon(CallEnd::kTimeout,
                     absl::StrCat("the call did not return within ",
                                  absl::FormatDuration(call_deadline_)));
    }
    return abandon(CallEnd::kGone, absl::StrCat(enqueued.status().message(), "; ", host.WhyGone()));
  }
  if (!enqueued->ok) return abandon(CallEnd::kRefused, enqueued->text);
  At("call: close");
  s = bracket_->Close(after);
  if (!s.ok()) {
    stream_stuck_ = true;
    return {CallEnd::kInfra, std::string(s.message())};
  }
  // The host's second reply: its work finished, or the CUDA error it hit
  // (then "done" may never be recorded, and the harness's stream is lost).
  At("call: wait for finished");
  absl::StatusOr<Reply> finished = host.Receive(call_deadline_);
  if (!finished.ok()) {
    stream_stuck_ = true;
    if (absl::IsDeadlineExceeded(finished.status())) {
      return {CallEnd::kTimeout, absl::StrCat("the call's GPU work did not finish within ",
                                              absl::FormatDuration(call_deadline_))};
    }
    return {CallEnd::kGone, absl::StrCat(finished.status().message(), "; ", host.WhyGone())};
  }
  if (!finished->ok) {
    stream_stuck_ = true;
    return {CallEnd::kRefused, finished->text};
  }
  At("call: finish");
  absl::StatusOr<double> ms = bracket_->Finish(call_deadline_);
  if (!ms.ok()) {
    stream_stuck_ = true;
    return {absl::IsDeadlineExceeded(ms.status()) ? CallEnd::kTimeout : CallEnd::kInfra,
            std::string(ms.status().message())};
  }
  r.bracket_ms = *ms;
  r.census = std::move(finished->text);
  At("call: done");
  return r;
}



absl::Status CallTimer::SetUpHostWithoutCalibration(HostChannel& host) {
  Request setup{Op::kSetup};
  setup.sync_bytes = bracket_->sync_bytes();
  PTXB_ASSIGN_OR_RETURN(const int sync, bracket_->SyncDescriptor());
  absl::StatusOr<Reply> reply = host.Ask(setup, kSetupTimeout, {sync});
  close(sync);
  if (!reply.ok()) return absl::InternalError(absl::StrCat(reply.status().message(), "; ", host.WhyGone()));
  if (!reply->ok) return absl::InternalError(reply->text);
  setup_note_ = reply->text;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<double>> CallTimer::SpinOffsets(HostChannel& host, const Request& spin,
                                                           int calls, int* forced) {
  auto none = [](cudaStream_t) { return absl::OkStatus(); };
  std::vector<double> offsets;
  for (int i = 0; i < kCalibrationWarmup + calls; ++i) {
    CallResult r = Call(host, spin, none, none);
    PTXB_RETURN_IF_ERROR(ToStatus(r));
    *forced += r.gate_forced && i >= kCalibrationWarmup;
    PTXB_ASSIGN_OR_RETURN(double span, bracket_->StampSpanMs());
    if (i >= kCalibrationWarmup) offsets.push_back(r.bracket_ms - span);
  }
  return offsets;
}

absl::StatusOr<Calibration> CallTimer::SetUpHost(HostChannel& host, absl::string_view name) {
  PTXB_RETURN_IF_ERROR(SetUpHostWithoutCalibration(host));
  std::vector<double> empties;
  auto none = [](cudaStream_t) { return absl::OkStatus(); };
  Request spin{Op::kCalibrate};
  spin.spin_ns = kCalibrationSpinNs;
  int forced = 0;
  PTXB_ASSIGN_OR_RETURN(std::vector<double> offsets,
                        SpinOffsets(host, spin, kCalibrationCalls, &forced));
  for (int i = 0; i < 20; ++i) {
    CallResult r = Call(host, Request{Op::kEmpty}, none, none);
    PTXB_RETURN_IF_ERROR(ToStatus(r));
    empties.push_back(r.bracket_ms);
  }
  const gpu::SampleStats s = gpu::Summarize(offsets);
  std::vector<double> sorted = offsets;
  std::sort(sorted.begin(), sorted.end());
  const double p10 = sorted[sorted.size() / 10], p90 = sorted[sorted.size() * 9 / 10];
  Calibration c;
  c.overhead_ms = s.median;
  c.tolerance_ms = (p90 - p10) + 0.005;
  c.log = absl::StrFormat(
      "%s calibration: call overhead %.4f ms (p10 %.4f, p90 %.4f) = bracket minus the own "
      "span of a %d us kernel, %d calls%s; empty call %.4f ms\n",
      name, c.overhead_ms, p10, p90, kCalibrationSpinNs / 1000, kCalibrationCalls,
      forced > 0 ? absl::StrCat(" (", forced, " with the gate forced open)") : "",
      gpu::Summarize(empties).median);
  return c;
}

absl::StatusOr<std::string> CallTimer::SurveyCalibration(HostChannel& host,
                                                         absl::string_view name) {
  int sms = 0;
  PTXB_RETURN_IF_ERROR(gpu::CudaStatus(
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "multiprocessor count"));
  struct Shape {
    int blocks, threads, smem, cluster;
  };
  // The last three are cuBLAS's short GEMM's (4 x 28 blocks of 384 threads,
  // ~200 KiB of shared memory, clusters of 4) with clusters of 1, 2 and 4.
  const int gemm = sms / 33 * 28;
  const Shape shapes[] = {{1, 32, 0, 1},           {sms, 128, 0, 1},
                          {4 * sms, 256, 0, 1},    {2 * sms, 256, 100 << 10, 1},
                          {gemm, 384, 200 << 10, 1}, {gemm, 384, 200 << 10, 2},
                          {gemm, 384, 200 << 10, 4}};
  std::string log;
  for (const Shape& shape : shapes) {
    for (int64_t us : {20, 100}) {
      Request spin{Op::kCalibrate};
      spin.spin_ns = us * 1000;
      spin.spin_blocks = shape.blocks;
      spin.spin_threads = shape.threads;
      spin.spin_smem = shape.smem;
      spin.spin_cluster = shape.cluster;
      int forced = 0;
      PTXB_ASSIGN_OR_RETURN(std::vector<double> offsets, SpinOffsets(host, spin, 40, &forced));
      absl::StrAppendFormat(&log,
                            "%s calibration survey: %d blocks x %d threads, %d KiB shared, clusters "
                            "of %d, %d us: overhead %s%s\n",
                            name, shape.blocks, shape.threads, shape.smem >> 10, shape.cluster, us,
                            gpu::DescribeTrial(offsets), forced > 0 ? " (gate forced)" : "");
    }
  }
  return log;
}

}  // namespace ptxbench::runner
