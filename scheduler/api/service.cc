#include "scheduler/api/service.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"
#include "experiment_spec/one_off_eval.h"
#include "experiment_spec/rendered_prompts.h"
#include "nlohmann/json.hpp"
#include "scheduler/feedback/extract.h"
#include "scheduler/state/finish.h"

namespace ptxbench::scheduler {

using experiment_spec::ExpandedExperiment;
using experiment_spec::ExpandSpec;
using experiment_spec::OneOffEvalSpec;
using experiment_spec::RenderedPrompts;
using experiment_spec::RenderPrompts;
using experiment_spec::SpecInput;

namespace v1 = ::ptxbench::v1;

// SubmitExperimentRequest.lineage_json's bound.
constexpr size_t kMaxLineageBytes = 64 << 10;

namespace {

// A long poll (Lease, AgentEval) whose caller may go away while it is
// parked: OnCancel tells the dispatcher to drop the waiter instead of
// granting it a task, or an answer, nobody reads.
class LongPollReactor final : public grpc::ServerUnaryReactor {
 public:
  LongPollReactor() : cancelled_(std::make_shared<std::atomic<bool>>(false)) {}
  std::shared_ptr<std::atomic<bool>> cancelled() const { return cancelled_; }
  void OnCancel() override { cancelled_->store(true); }
  void OnDone() override { delete this; }

 private:
  std::shared_ptr<std::atomic<bool>> cancelled_;
};

}  // namespace

grpc::ServerUnaryReactor* ExecutorServiceImpl::Register(grpc::CallbackServerContext* ctx,
                                                        const v1::RegisterRequest* request,
                                                        v1::RegisterResponse* response) {
  absl::StatusOr<auth::Principal> who = access_->Check(ctx, "Register");
  if (!who.ok()) return Refuse(ctx, who.status());
  if (absl::Status kind = Access::CheckExecutorKind(*who, request->kind()); !kind.ok()) {
    return Refuse(ctx, kind);
  }
  return Dispatch<v1::RegisterResponse, v1::RegisterResponse>(
      ctx, dispatcher_, response,
      [request, owner = who->name](Core& core) { return core.Register(*request, owner); },
      [](v1::RegisterResponse& r, v1::RegisterResponse* out) { *out = std::move(r); });
}

grpc::ServerUnaryReactor* ExecutorServiceImpl::Lease(grpc::CallbackServerContext* ctx,
                                                     const v1::LeaseRequest* request,
                                                     v1::LeaseResponse* response) {
  absl::StatusOr<auth::Principal> who = access_->Check(ctx, "Lease");
  if (!who.ok()) return Refuse(ctx, who.status());
  auto* reactor = new LongPollReactor();
  dispatcher_->Lease(*request, who->name, reactor->cancelled(),
                     [reactor, response](absl::StatusOr<v1::LeaseResponse> result) {
                       if (result.ok()) *response = std::move(*result);
                       reactor->Finish(ToGrpcStatus(result.status()));
                     });
  return reactor;
}

grpc::ServerUnaryReactor* ExecutorServiceImpl::AgentEval(grpc::CallbackServerContext* ctx,
                                                         const v1::AgentEvalRequest* request,
                                                         v1::AgentEvalResponse* response) {
  absl::StatusOr<auth::Principal> who = access_->Check(ctx, "AgentEval");
  if (!who.ok()) return Refuse(ctx, who.status());
  auto* reactor = new LongPollReactor();
  dispatcher_->AgentEval(*request, who->name, reactor->cancelled(),
                         [reactor, response](absl::StatusOr<v1::AgentEvalResponse> result) {
                           if (result.ok()) *response = std::move(*result);
                           reactor->Finish(ToGrpcStatus(result.status()));
                         });
  return reactor;
}

grpc::ServerUnaryReactor* ExecutorServiceImpl::Heartbeat(grpc::CallbackServerContext* ctx,
                                                         const v1::HeartbeatRequest* request,
                                                         v1::HeartbeatResponse* response) {
  absl::StatusOr<auth::Principal> who = access_->Check(ctx, "Heartbeat");
  if (!who.ok()) return Refuse(ctx, who.status());
  return Dispatch<v1::HeartbeatResponse, v1::HeartbeatResponse>(
      ctx, dispatcher_, response,
      [request, owner = who->name](Core& core) -> absl::StatusOr<v1::HeartbeatResponse> {
        PTXB_RETURN_IF_ERROR(core.CheckOwner(request->executor_id(), owner));
        return core.Heartbeat(*request);
      },
      [](v1::HeartbeatResponse& r, v1::HeartbeatResponse* out) { *out = std::move(r); });
}

grpc::ServerUnaryReactor* ExecutorServiceImpl::Complete(grpc::CallbackServerContext* ctx,
                                                        const v1::CompleteRequest* request,
                                                        v1::CompleteResponse* response) {
  absl::StatusOr<auth::Principal> who = access_->Check(ctx, "Complete");
  if (!who.ok()) return Refuse(ctx, who.status());
  auto* reactor = ctx->DefaultReactor();
  dispatcher_->Complete(*request, who->name,
                        [reactor, response](absl::StatusOr<v1::CompleteResponse> result) {
                          if (result.ok()) *response = std::move(*result);
                          reactor->Finish(ToGrpcStatus(result.status()));
                        });
  return reactor;
}

grpc::ServerUnaryReactor* ExecutorServiceImpl::Leave(grpc::CallbackServerContext* ctx,
                                                     const v1::LeaveRequest* request,
                                                     v1::LeaveResponse* response) {
  absl::StatusOr<auth::Principal> who = access_->Check(ctx, "Leave");
  if (!who.ok()) return Refuse(ctx, who.status());
  return Dispatch<int, v1::LeaveResponse>(
      ctx, dispatcher_, response,
      [this, request, owner = who->name](Core& core) -> absl::StatusOr<int> {
        PTXB_RETURN_IF_ERROR(core.CheckOwner(request->executor_id(), owner));
        // Its calls have ended: their concurrency slots come back now.
        limits_->ReleaseAll({owner, request->executor_id()});
        return core.Leave(request->executor_id());
      },
      [](int& released, v1::LeaveResponse* out) { out->set_released(released); });
}

grpc::ServerUnaryReactor* ExecutorServiceImpl::AcquireCallPermit(
    grpc::CallbackServerContext* ctx, const v1::AcquireCallPermitRequest* request,
    v1::AcquireCallPermitResponse* response) {
  absl::StatusOr<auth::Principal> who = access_->Check(ctx, "AcquireCallPermit");
  if (!who.ok()) return Refuse(ctx, who.status());
  const v1::ModelRateLimits& l = request->limits();
  absl::StatusOr<FleetLimits::Grant> grant =
      limits_->Acquire({who->name, request->executor_id()}, request->model(), request->tokens(),
                       {l.rpm(), l.tpm(), l.concurrency()});
  if (grant.ok()) {
    response->set_permit_id(grant->permit_id);
    if (grant->permit_id == 0) {
      response->set_wait_ms(std::max<int64_t>(1, absl::ToInt64Milliseconds(grant->wait)));
    }
    response->set_permit_ttl_ms(absl::ToInt64Milliseconds(limits_->permit_ttl()));
  }
  return Refuse(ctx, grant.status());
}

grpc::ServerUnaryReactor* ExecutorServiceImpl::ReleaseCallPermit(
    grpc::CallbackServerContext* ctx, const v1::ReleaseCallPermitRequest* request,
    v1::ReleaseCallPermitResponse*) {
  absl::StatusOr<auth::Principal> who = access_->Check(ctx, "ReleaseCallPermit");
  if (!who.ok()) return Refuse(ctx, who.status());
  return Refuse(ctx, limits_->Release({who->name, request->executor_id()}, request->permit_id(),
                                      request->billed_tokens()));
}

grpc::ServerUnaryReactor* ExecutorServiceImpl::RenewCallPermits(
    grpc::CallbackServerContext* ctx, const v1::RenewCallPermitsRequest* request,
    v1::RenewCallPermitsResponse* response) {
  absl::StatusOr<auth::Principal> who = access_->Check(ctx, "RenewCallPermits");
  if (!who.ok()) return Refuse(ctx, who.status());
  absl::StatusOr<std::vector<uint64_t>> unknown =
      limits_->Renew({who->name, request->executor_id()}, request->permit_ids());
  if (unknown.ok()) {
    for (uint64_t id : *unknown) response->add_unknown(id);
  }
  return Refuse(ctx, unknown.status());
}

grpc::ServerUnaryReactor* ClientServiceImpl::SubmitExperiment(
    grpc::CallbackServerContext* ctx, const v1::SubmitExperimentRequest* request,
    v1::SubmitExperimentResponse* response) {
  if (absl::Status denied = Deny(ctx, "SubmitExperiment"); !denied.ok()) return Refuse(ctx, denied);
  SpecInput input{request->spec_json(),
                  request->spec_path().empty() ? "<spec>" : request->spec_path(),
                  request->name(), request->definition(), request->model(), request->eval(),
                  {request->files().begin(), request->files().end()},
                  {request->prompts().begin(), request->prompts().end()},
                  request->agent_cli()};
  absl::StatusOr<ExpandedExperiment> expanded =
      ExpandSpec(input, *deps_.definitions, *deps_.prompts, deps_.limits);
  if (expanded.ok() && !request->lineage_json().empty()) {
    const nlohmann::json lineage =
        nlohmann::json::parse(request->lineage_json(), nullptr, /*allow_exceptions=*/false);
    if (!lineage.is_object() || request->lineage_json().size() > kMaxLineageBytes) {
      expanded = absl::InvalidArgumentError(
          "lineage_json: expected a JSON object of at most 64 KiB (what made the experiment)");
    } else {
      expanded->lineage_json = lineage.dump();
    }
  }
  if (!expanded.ok() || request->dry_run()) {
    return Answer<ExpandedExperiment, v1::SubmitExperimentResponse>(
        ctx, std::move(expanded), response,
        [](ExpandedExperiment& x, v1::SubmitExperimentResponse* out) {
          out->set_experiment_id(x.experiment_id);
          out->set_trajectories(static_cast<int64_t>(x.trajectories.size()));
        });
  }
  // Rendered here, off the writer thread.
  absl::StatusOr<RenderedPrompts> rendered =
      RenderPrompts(*expanded, *deps_.definitions, *deps_.prompts);
  if (!rendered.ok()) {
    return Answer<bool, v1::SubmitExperimentResponse>(ctx, rendered.status(), response,
                                                      [](bool&, auto*) {});
  }
  auto prompts = std::make_shared<const RenderedPrompts>(*std::move(rendered));
  auto experiment = std::make_shared<ExpandedExperiment>(*std::move(expanded));
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  deps_.dispatcher->Submit(experiment, prompts,
                           [reactor, response](absl::StatusOr<SubmitOutcome> o) {
                             if (o.ok()) {
                               response->set_experiment_id(o->experiment_id);
                               response->set_created(o->created);
                               response->set_trajectories(o->trajectories);
                             }
                             reactor->Finish(ToGrpcStatus(o.status()));
                           });
  return reactor;
}

grpc::ServerUnaryReactor* ClientServiceImpl::SubmitEval(grpc::CallbackServerContext* ctx,
                                                        const v1::SubmitEvalRequest* request,
                                                        v1::SubmitEvalResponse* response) {
  if (absl::Status denied = Deny(ctx, "SubmitEval"); !denied.ok()) return Refuse(ctx, denied);
  const v1::EvalRequest& e = request->eval();
  auto refuse = [&](absl::Status status) {
    return Answer<bool, v1::SubmitEvalResponse>(ctx, std::move(status), response,
                                                [](bool&, auto*) {});
  };
  if (!e.workload_uuids().empty()) {
    return refuse(absl::InvalidArgumentError(
        "choosing workloads is not supported through the scheduler yet: evaluate locally "
        "(ptxbench eval --local) or without --workload"));
  }
  absl::StatusOr<ExpandedExperiment> expanded = OneOffEvalSpec(
      {e.definition(), e.language(), e.kernel_source(), e.target_speedup(), e.mode(), absl::Now()},
      *deps_.definitions, *deps_.prompts, deps_.limits);
  if (!expanded.ok()) return refuse(expanded.status());
  absl::StatusOr<RenderedPrompts> prompts =
      RenderPrompts(*expanded, *deps_.definitions, *deps_.prompts);
  if (!prompts.ok()) return refuse(prompts.status());
  const std::string fence(AnswerFence(expanded->language));
  const std::string answer =
      absl::StrCat("```", fence, "\n", e.kernel_source(),
                   absl::EndsWith(e.kernel_source(), "\n") ? "" : "\n", "```\n");
  auto experiment = std::make_shared<ExpandedExperiment>(*std::move(expanded));
  return Dispatch<std::string, v1::SubmitEvalResponse>(
      ctx, deps_.dispatcher, response,
      [experiment, prompts = std::make_shared<const RenderedPrompts>(*std::move(prompts)),
       answer](Core& core) { return core.SubmitEval(*experiment, *prompts, answer); },
      [experiment](std::string& trajectory, v1::SubmitEvalResponse* out) {
        out->set_experiment_id(experiment->experiment_id);
        out->set_trajectory_id(trajectory);
      });
}

grpc::ServerUnaryReactor* ClientServiceImpl::GetExperiment(
    grpc::CallbackServerContext* ctx, const v1::GetExperimentRequest* request,
    v1::GetExperimentResponse* response) {
  if (absl::Status denied = Deny(ctx, "GetExperiment"); !denied.ok()) return Refuse(ctx, denied);
  return Answer<v1::GetExperimentResponse, v1::GetExperimentResponse>(
      ctx, deps_.reader->GetExperiment(request->experiment_id()), response,
      [](v1::GetExperimentResponse& r, v1::GetExperimentResponse* out) { *out = std::move(r); });
}

grpc::ServerUnaryReactor* ClientServiceImpl::ListExperiments(
    grpc::CallbackServerContext* ctx, const v1::ListExperimentsRequest*,
    v1::ListExperimentsResponse* response) {
  if (absl::Status denied = Deny(ctx, "ListExperiments"); !denied.ok()) return Refuse(ctx, denied);
  return Answer<v1::ListExperimentsResponse, v1::ListExperimentsResponse>(
      ctx, deps_.reader->ListExperiments(), response,
      [](v1::ListExperimentsResponse& r, v1::ListExperimentsResponse* out) { *out = std::move(r); });
}

grpc::ServerUnaryReactor* ClientServiceImpl::ListTrajectories(
    grpc::CallbackServerContext* ctx, const v1::ListTrajectoriesRequest* request,
    v1::ListTrajectoriesResponse* response) {
  if (absl::Status denied = Deny(ctx, "ListTrajectories"); !denied.ok()) return Refuse(ctx, denied);
  return Answer<v1::ListTrajectoriesResponse, v1::ListTrajectoriesResponse>(
      ctx, deps_.reader->ListTrajectories(*request), response,
      [](v1::ListTrajectoriesResponse& r, v1::ListTrajectoriesResponse* out) {
        *out = std::move(r);
      });
}

grpc::ServerUnaryReactor* ClientServiceImpl::GetTrajectory(
    grpc::CallbackServerContext* ctx, const v1::GetTrajectoryRequest* request,
    v1::GetTrajectoryResponse* response) {
  if (absl::Status denied = Deny(ctx, "GetTrajectory"); !denied.ok()) return Refuse(ctx, denied);
  return Answer<v1::Trajectory, v1::GetTrajectoryResponse>(
      ctx, deps_.reader->GetTrajectory(request->trajectory_id(), request->agent_record()),
      response,
      [](v1::Trajectory& t, v1::GetTrajectoryResponse* out) {
        *out->mutable_trajectory() = std::move(t);
      });
}

grpc::ServerUnaryReactor* ClientServiceImpl::Cancel(grpc::CallbackServerContext* ctx,
                                                    const v1::CancelRequest* request,
                                                    v1::CancelResponse* response) {
  if (absl::Status denied = Deny(ctx, "Cancel"); !denied.ok()) return Refuse(ctx, denied);
  v1::CancelRequest req = *request;
  if (req.has_experiment_id()) {
    return DispatchInParts<v1::CancelResponse>(
        ctx, deps_.dispatcher, response,
        [id = req.experiment_id()](Core& core, int max, WritePart& part) {
          return core.CancelExperiment(id, max, part);
        },
        [](int64_t n, v1::CancelResponse* out) { out->set_cancelled(n); });
  }
  return Dispatch<int64_t, v1::CancelResponse>(
      ctx, deps_.dispatcher, response,
      [req](Core& core) -> absl::StatusOr<int64_t> {
        if (req.has_trajectory_id()) return core.CancelTrajectory(req.trajectory_id());
        return absl::InvalidArgumentError("cancel needs an experiment or a trajectory id");
      },
      [](int64_t& n, v1::CancelResponse* out) { out->set_cancelled(n); });
}

grpc::ServerUnaryReactor* ClientServiceImpl::Retry(grpc::CallbackServerContext* ctx,
                                                   const v1::RetryRequest* request,
                                                   v1::RetryResponse* response) {
  if (absl::Status denied = Deny(ctx, "Retry"); !denied.ok()) return Refuse(ctx, denied);
  v1::RetryRequest req = *request;
  return DispatchInParts<v1::RetryResponse>(
      ctx, deps_.dispatcher, response,
      [req](Core& core, int max, WritePart& part) {
        return core.Retry(req.experiment_id(), req.scope(), max, part);
      },
      [](int64_t n, v1::RetryResponse* out) { out->set_retried(n); });
}

grpc::ServerUnaryReactor* ClientServiceImpl::Extend(grpc::CallbackServerContext* ctx,
                                                    const v1::ExtendRequest* request,
                                                    v1::ExtendResponse* response) {
  if (absl::Status denied = Deny(ctx, "Extend"); !denied.ok()) return Refuse(ctx, denied);
  v1::ExtendRequest req = *request;
  return DispatchInParts<v1::ExtendResponse>(
      ctx, deps_.dispatcher, response,
      [req](Core& core, int max, WritePart& part) {
        return core.Extend(req.experiment_id(), req.num_turns(), max, part);
      },
      [](int64_t n, v1::ExtendResponse* out) { out->set_resumed(n); });
}

grpc::ServerUnaryReactor* ClientServiceImpl::ListExecutors(
    grpc::CallbackServerContext* ctx, const v1::ListExecutorsRequest*,
    v1::ListExecutorsResponse* response) {
  if (absl::Status denied = Deny(ctx, "ListExecutors"); !denied.ok()) return Refuse(ctx, denied);
  using List = std::vector<v1::ExecutorInfo>;
  return Dispatch<List, v1::ListExecutorsResponse>(
      ctx, deps_.dispatcher, response,
      [](Core& core) -> absl::StatusOr<List> { return core.ListExecutors(); },
      [](List& list, v1::ListExecutorsResponse* out) {
        for (auto& e : list) *out->add_executors() = std::move(e);
      });
}

grpc::ServerUnaryReactor* ClientServiceImpl::Drain(grpc::CallbackServerContext* ctx,
                                                   const v1::DrainRequest* request,
                                                   v1::DrainResponse* response) {
  if (absl::Status denied = Deny(ctx, "Drain"); !denied.ok()) return Refuse(ctx, denied);
  std::string id = request->executor_id();
  return Dispatch<bool, v1::DrainResponse>(
      ctx, deps_.dispatcher, response,
      [id](Core& core) -> absl::StatusOr<bool> {
        absl::Status status = core.Drain(id);
        if (!status.ok()) return status;
        return true;
      },
      [](bool&, v1::DrainResponse*) {});
}

}  // namespace ptxbench::scheduler
