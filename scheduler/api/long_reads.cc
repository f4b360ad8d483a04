// The long reads of the client service: ReadTrajectories (a stream), GetReport
// and GetDefinitions. Each runs on its own thread, on its own Snapshot, so it
// neither holds a gRPC callback thread nor the Reader's connection for its
// duration, and its thread runs at a lower CPU priority than the scheduler's
// writer: an export of a million turns slows leasing as little as it can.
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/grpc_status.h"
#include "common/log.h"
#include "common/status_macros.h"
#include "google/protobuf/arena.h"
#include "scheduler/api/service.h"
#include "scheduler/api/stream_reactor.h"
#include "scheduler/read/report_query.h"
#include "scheduler/state/finish.h"
#include "workloads/workload_record.h"

namespace ptxbench::scheduler {

namespace v1 = ::ptxbench::v1;

namespace {

// A stream message holds about this much (at most twice, plus one turn):
// under gRPC's default 4 MiB receive limit of other clients, large enough to
// amortize each write.
constexpr size_t kPartBytes = 1 << 20;

// Long reads at once; more are refused (RESOURCE_EXHAUSTED), not queued.
constexpr int kMaxLongReads = 8;

// Gives the calling thread the lowest priority (nice 19; Linux: per thread),
// so that it takes the CPU that the writer and the gRPC threads leave.
void LowerThreadPriority() {
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
}

// Paces a long read while the scheduler is busy: between chunks of work it
// sleeps so that it works at most kBusyDuty of the time. A low priority alone
// is not enough: on 2 cores a report or export running beside
// scheduler_bench still took 30-60% of its throughput (the caches and memory
// it shares with the writer, not its CPU time). On an idle scheduler it runs
// flat out.
class Pacer {
 public:
  explicit Pacer(const Dispatcher* dispatcher)
      : dispatcher_(dispatcher),
        chunk_start_(absl::Now()),
        last_check_(chunk_start_),
        last_ops_(dispatcher->GetStats().ops) {}

  // Called between chunks of work.
  void Chunk() {
    const absl::Time now = absl::Now();
    const int64_t ops = dispatcher_->GetStats().ops;
    const double seconds = absl::ToDoubleSeconds(now - last_check_);
    const bool busy = seconds > 0 && (ops - last_ops_) / seconds > kBusyOpsPerSecond;
    last_check_ = now;
    last_ops_ = ops;
    if (busy) absl::SleepFor((now - chunk_start_) * ((1 - kBusyDuty) / kBusyDuty));
    chunk_start_ = absl::Now();
  }

 private:
  // Writes per second above which the scheduler counts as busy (leasing and
  // completing tasks), and the share of the time a long read may then take.
  static constexpr double kBusyOpsPerSecond = 200;
  static constexpr double kBusyDuty = 0.1;

  const Dispatcher* dispatcher_;
  absl::Time chunk_start_;
  absl::Time last_check_;
  int64_t last_ops_;
};

class ReadTrajectoriesReactor final : public ThreadedWriteReactor<v1::ReadTrajectoriesResponse>,
                                      private Snapshot::PartWriter {
 public:
  ReadTrajectoriesReactor(LongReadSlots* slots, const Reader* reader,
                          const Dispatcher* dispatcher, const v1::ReadTrajectoriesRequest& request)
      : slot_(slots), reader_(reader), pacer_(dispatcher), request_(request) {
    Start(
        [this] {
          LowerThreadPriority();
          const absl::Status streamed = Stream();
          slot_.Release();  // before the client sees the end
          return ToGrpcStatus(streamed);
        },
        "read ended");
  }

 private:
  absl::Status Stream() {
    PTXB_RETURN_IF_ERROR(slot_.status());
    if (request_.target_case() == v1::ReadTrajectoriesRequest::TARGET_NOT_SET) {
      return absl::InvalidArgumentError("name an experiment or a trajectory");
    }
    PTXB_ASSIGN_OR_RETURN(std::unique_ptr<Snapshot> snapshot, reader_->OpenSnapshot());
    PTXB_RETURN_IF_ERROR(snapshot->ReadTrajectories(request_, kPartBytes, *this));
    if (buffers_[current_].response != nullptr) return Send();
    return absl::OkStatus();
  }

  // Parts are built on an arena, in the message they go out in, and freed
  // all at once after it went: an export of a million turns would otherwise
  // spend much of its time allocating and freeing them one by one. Two
  // buffers: the next message is read while gRPC sends the last one.
  struct Buffer {
    google::protobuf::Arena arena;
    v1::ReadTrajectoriesResponse* response = nullptr;
    size_t bytes = 0;
  };

  v1::Trajectory* NewPart() override {
    Buffer& b = buffers_[current_];
    if (b.response == nullptr) {
      b.response = google::protobuf::Arena::CreateMessage<v1::ReadTrajectoriesResponse>(&b.arena);
    }
    return b.response->add_trajectories();
  }
  absl::Status PartDone(size_t bytes) override {
    Buffer& b = buffers_[current_];
    b.bytes += bytes;
    if (b.bytes < kPartBytes) return absl::OkStatus();
    return Send();
  }

  // Starts sending the current buffer once the previous message has gone
  // (one message in flight: a slow reader holds back the snapshot, not
  // memory), then switches to the other buffer, whose message has gone.
  absl::Status Send() {
    pacer_.Chunk();
    if (!StartWriteAfterPrevious(buffers_[current_].response)) {
      return absl::CancelledError("the client went away");
    }
    current_ ^= 1;
    Buffer& next = buffers_[current_];
    next.arena.Reset();
    next.response = nullptr;
    next.bytes = 0;
    return absl::OkStatus();
  }

  LongReadSlots::Slot slot_;
  const Reader* reader_;
  Pacer pacer_;
  const v1::ReadTrajectoriesRequest request_;
  // The stream thread's own; gRPC reads a buffer's message between its
  // StartWrite and OnWriteDone, and the thread resets a buffer only after.
  Buffer buffers_[2];
  int current_ = 0;
};

// A unary call answered from its own thread.
class BackgroundReactor final : public grpc::ServerUnaryReactor {
 public:
  explicit BackgroundReactor(std::function<absl::Status()> work) {
    thread_ = std::thread([this, work = std::move(work)] {
      LowerThreadPriority();
      Finish(ToGrpcStatus(work()));
    });
  }
  void OnDone() override {
    thread_.join();
    delete this;
  }

 private:
  std::thread thread_;
};

}  // namespace

LongReadSlots::Slot::Slot(LongReadSlots* slots) : slots_(slots) {
  absl::MutexLock lock(&slots_->mu_);
  if (slots_->in_use_ >= kMaxLongReads) {
    slots_ = nullptr;
    return;
  }
  ++slots_->in_use_;
  granted_ = true;
}

LongReadSlots::Slot::~Slot() { Release(); }

void LongReadSlots::Slot::Release() {
  if (slots_ == nullptr) return;
  absl::MutexLock lock(&slots_->mu_);
  --slots_->in_use_;
  slots_ = nullptr;
}

absl::Status LongReadSlots::Slot::status() const {
  if (granted_) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "the scheduler is already serving ", kMaxLongReads,
      " reports or exports; try again when one has finished"));
}

grpc::ServerWriteReactor<v1::ReadTrajectoriesResponse>* ClientServiceImpl::ReadTrajectories(
    grpc::CallbackServerContext* ctx, const v1::ReadTrajectoriesRequest* request) {
  if (absl::Status denied = Deny(ctx, "ReadTrajectories"); !denied.ok()) {
    return new RefusedStream<v1::ReadTrajectoriesResponse>(denied);
  }
  return new ReadTrajectoriesReactor(&long_reads_, deps_.reader, deps_.dispatcher, *request);
}

grpc::ServerUnaryReactor* ClientServiceImpl::GetReport(grpc::CallbackServerContext* ctx,
                                                       const v1::ReportRequest* request,
                                                       v1::ReportResponse* response) {
  if (absl::Status denied = Deny(ctx, "GetReport"); !denied.ok()) return Refuse(ctx, denied);
  return new BackgroundReactor([this, request, response]() -> absl::Status {
    LongReadSlots::Slot slot(&long_reads_);
    PTXB_RETURN_IF_ERROR(slot.status());
    PTXB_ASSIGN_OR_RETURN(std::unique_ptr<Snapshot> snapshot, deps_.reader->OpenSnapshot());
    const absl::Time start = absl::Now();
    Pacer pacer(deps_.dispatcher);
    PTXB_ASSIGN_OR_RETURN(*response, ComputeReport(*snapshot, *deps_.definitions, *request,
                                                   [&pacer] { pacer.Chunk(); }));
    LogInfo("report", {{"experiments", absl::StrCat(request->experiment_ids_size())},
                       {"ms", absl::StrCat(absl::ToInt64Milliseconds(absl::Now() - start))}});
    return absl::OkStatus();
  });
}

absl::StatusOr<v1::GetDefinitionsResponse> ClientServiceImpl::Definitions(
    const v1::GetDefinitionsRequest& request) const {
  std::vector<std::string> names(request.names().begin(), request.names().end());
  if (!request.experiment_id().empty()) {
    PTXB_ASSIGN_OR_RETURN(std::unique_ptr<Snapshot> snapshot, deps_.reader->OpenSnapshot());
    PTXB_ASSIGN_OR_RETURN(StoredExperiment experiment,
                          snapshot->Experiment(request.experiment_id()));
    PTXB_ASSIGN_OR_RETURN(std::vector<std::string> used,
                          snapshot->Definitions(experiment.rowid));
    for (std::string& name : used) {
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        names.push_back(std::move(name));
      }
    }
  }
  v1::GetDefinitionsResponse out;
  for (const std::string& name : names) {
    PTXB_ASSIGN_OR_RETURN(const workloads::Definition* d, deps_.definitions->Find(name));
    v1::DefinitionDocument* doc = out.add_definitions();
    doc->set_name(d->name);
    doc->set_op_type(d->op_type);
    doc->set_json(d->json);
    for (const workloads::Workload& w : d->workloads) {
      doc->add_workload_lines(workloads::FormatWorkloadRecord(d->name, w));
    }
    doc->set_dataset(d->dataset);
    doc->set_version(d->version);
  }
  return out;
}

grpc::ServerUnaryReactor* ClientServiceImpl::GetDefinitions(
    grpc::CallbackServerContext* ctx, const v1::GetDefinitionsRequest* request,
    v1::GetDefinitionsResponse* response) {
  if (absl::Status denied = Deny(ctx, "GetDefinitions"); !denied.ok()) return Refuse(ctx, denied);
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  absl::StatusOr<v1::GetDefinitionsResponse> result = Definitions(*request);
  if (result.ok()) *response = *std::move(result);
  reactor->Finish(ToGrpcStatus(result.status()));
  return reactor;
}

}  // namespace ptxbench::scheduler
