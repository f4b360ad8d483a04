#include "storage/checkpointer.h"

#include "common/log.h"
#include "common/status_macros.h"

namespace ptxbench::storage {

Checkpointer::Checkpointer(std::string path, absl::Duration interval)
    : path_(std::move(path)), interval_(interval) {}

Checkpointer::~Checkpointer() { Stop(); }

absl::Status Checkpointer::Start() {
  PTXB_ASSIGN_OR_RETURN(db_, Database::Open(path_, {}));
  thread_ = std::thread([this] { Loop(); });
  return absl::OkStatus();
}

void Checkpointer::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

int64_t Checkpointer::runs() const {
  absl::MutexLock lock(&mu_);
  return runs_;
}

void Checkpointer::Loop() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      auto stopping = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stopping_; };
      mu_.AwaitWithTimeout(absl::Condition(&stopping), interval_);
      if (stopping_) return;
    }
    absl::Status status = db_->Execute("PRAGMA wal_checkpoint(PASSIVE)");
    if (!status.ok()) {
      // Not fatal: the writer's auto-checkpoint is the backstop.
      LogWarning("checkpoint failed", {{"path", path_}, {"error", status.ToString()}});
    }
    absl::MutexLock lock(&mu_);
    ++runs_;
  }
}

}  // namespace ptxbench::storage
