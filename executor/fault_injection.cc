#include "executor/fault_injection.h"

#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/hash.h"
#include "common/log.h"
#include "executor/task_handler.h"

namespace ptxbench::executor {

FaultInjector::FaultInjector(std::string salt, uint64_t seed, FaultRates rates)
    : salt_(std::move(salt)), seed_(seed), rates_(std::move(rates)) {
  if (!rates_.crash) rates_.crash = [] { _exit(70); };
}

double FaultInjector::Draw(const ptxbench::v1::Task& task, absl::string_view what) const {
  const uint64_t h = StableHash64(absl::StrCat(salt_, "/", seed_, "/", what, "/",
                                               task.lease().task_id(), "/",
                                               task.lease().lease_id()));
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

std::optional<ptxbench::v1::CompleteRequest> FaultInjector::CrashAfterLease(
    const ptxbench::v1::Task& task) const {
  if (Draw(task, "crash") >= rates_.crash_rate) return std::nullopt;
  LogError("simulated crash right after leasing (--crash-rate)",
           {{"task_id", task.lease().task_id()}, {"lease_id", task.lease().lease_id()}});
  rates_.crash();
  return FailureReport(ptxbench::v1::INFRA, "simulated crash (--crash-rate)");
}

bool FaultInjector::Fails(const ptxbench::v1::Task& task) const {
  return Draw(task, "failure") < rates_.failure_rate;
}

}  // namespace ptxbench::executor
