#include "agent_gateway/simulated/gateway.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace ptxbench::agent_gateway {
namespace {

using ::ptxbench::v1::CompleteRequest;

// Keeps injected faults independent of the other simulated executor's.
constexpr char kFaultSalt[] = "ptxb-sim-gateway";

}  // namespace

ptxbench::v1::Capabilities SimulatedGatewayCapabilities(const std::vector<std::string>& models,
                                                        int slots) {
  ptxbench::v1::Capabilities caps;
  for (const std::string& m : models) caps.add_models(m);
  caps.set_serves_any_model(models.empty());
  caps.set_slots(slots);
  caps.set_simulated(true);
  return caps;
}

absl::StatusOr<std::unique_ptr<SimulatedGatewayHandler>> SimulatedGatewayHandler::Create(
    Options options) {
  int fd = -1;
  if (!options.request_log_path.empty()) {
    fd = open(options.request_log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot open request log ", options.request_log_path, ": ", std::strerror(errno)));
    }
  }
  std::unique_ptr<ScriptedAnswers> scripted;
  if (!options.answers_dir.empty()) {
    absl::StatusOr<std::unique_ptr<ScriptedAnswers>> loaded =
        ScriptedAnswers::Load(options.answers_dir);
    if (!loaded.ok()) {
      if (fd >= 0) close(fd);
      return loaded.status();
    }
    scripted = *std::move(loaded);
  }
  return std::unique_ptr<SimulatedGatewayHandler>(
      new SimulatedGatewayHandler(std::move(options), fd, std::move(scripted)));
}

SimulatedGatewayHandler::SimulatedGatewayHandler(Options options, int request_log_fd,
                                                 std::unique_ptr<ScriptedAnswers> scripted)
    : options_(std::move(options)),
      faults_(kFaultSalt, options_.seed, options_.faults),
      model_(options_.seed),
      scripted_(std::move(scripted)),
      request_log_fd_(request_log_fd) {}

SimulatedGatewayHandler::~SimulatedGatewayHandler() {
  if (request_log_fd_ >= 0) close(request_log_fd_);
}

CompleteRequest SimulatedGatewayHandler::Run(const ptxbench::v1::Task& task,
                                             const std::atomic<bool>& cancelled) {
  if (std::optional<CompleteRequest> crashed = faults_.CrashAfterLease(task)) return *crashed;
  if (!task.has_llm()) {
    return executor::FailureReport(ptxbench::v1::INFRA, absl::StrCat("a gateway runs LLM tasks; got ",
                                                     ptxbench::v1::TaskKind_Name(task.kind()),
                                                     " task ", task.lease().task_id()));
  }
  const std::string& model = task.llm().model();
  if (!options_.models.empty() &&
      std::find(options_.models.begin(), options_.models.end(), model) == options_.models.end()) {
    return executor::FailureReport(ptxbench::v1::TERMINAL,
                   absl::StrCat("unknown model '", model, "': not served by this gateway"));
  }
  // A rejected call (429) produces no answer, so it is not a request that
  // must never repeat: it is not logged.
  if (faults_.Fails(task)) {
    return executor::FailureReport(ptxbench::v1::MODEL_API,
                   "simulated provider error: 429 Too Many Requests (--failure-rate)",
                   /*retry_after_ms=*/100);
  }
  if (request_log_fd_ >= 0) {
    std::string line = absl::StrCat(task.trajectory_id(), " ", task.turn(), "\n");
    if (write(request_log_fd_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
      return executor::FailureReport(ptxbench::v1::INFRA,
                     absl::StrCat("cannot append to the request log ", options_.request_log_path,
                                  ": ", std::strerror(errno)));
    }
  }
  const absl::Time start = absl::Now();
  if (!executor::SleepUnlessCancelled(options_.latency, cancelled)) {
    return executor::FailureReport(ptxbench::v1::INFRA, "cancelled");
  }
  CompleteRequest out;
  if (scripted_ != nullptr) {
    absl::StatusOr<ptxbench::v1::LlmResponse> answer = scripted_->Answer(task.llm(), task.turn());
    if (!answer.ok()) {
      return executor::FailureReport(ptxbench::v1::TERMINAL, std::string(answer.status().message()));
    }
    *out.mutable_llm() = *std::move(answer);
  } else {
    *out.mutable_llm() = model_.Answer(task.llm(), task.trajectory_id(), task.turn());
  }
  out.mutable_llm()->set_latency_ms(absl::ToInt64Milliseconds(absl::Now() - start));
  return out;
}

}  // namespace ptxbench::agent_gateway
