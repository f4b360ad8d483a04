#ifndef PTXBENCH_SCHEDULER_API_ACCESS_H_
#define PTXBENCH_SCHEDULER_API_ACCESS_H_

// Who may call what: the role each RPC of the scheduler needs, and the check
// every handler makes before doing anything. docs/SECURITY.md shows this
// table; scheduler/api/access_test.cc checks that the two agree and that every
// RPC of both services is in it.
//
// Thread-safe.

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "auth/authenticator.h"
#include "grpcpp/server_context.h"
#include "ptxbench/v1/client.pb.h"

namespace ptxbench::scheduler {

struct RpcAccess {
  absl::string_view service;  // "ClientService" or "ExecutorService"
  absl::string_view method;   // "Cancel"
  // The roles that may call it; empty: any valid token.
  std::vector<ptxbench::v1::Role> roles;
};

// Every RPC of the scheduler, in the order of the proto files.
const std::vector<RpcAccess>& AccessTable();

class Access {
 public:
  // `authenticator` is not owned and must outlive this.
  explicit Access(const auth::Authenticator* authenticator);

  // The caller of `method` (a name in AccessTable). UNAUTHENTICATED for no,
  // a malformed, an unknown or a revoked token; PERMISSION_DENIED naming the
  // roles it needs and the token's role. Nothing is logged of the token.
  absl::StatusOr<auth::Principal> Check(const grpc::CallbackServerContext* ctx,
                                        absl::string_view method) const;
  // The same for a call's metadata (tests, and callers without a context).
  absl::StatusOr<auth::Principal> Check(
      const std::multimap<grpc::string_ref, grpc::string_ref>& metadata,
      absl::string_view method) const;

  // PERMISSION_DENIED when a worker token registers a gateway or the reverse.
  static absl::Status CheckExecutorKind(const auth::Principal& who,
                                        ptxbench::v1::ExecutorKind kind);

 private:
  const auth::Authenticator* authenticator_;
  absl::flat_hash_map<absl::string_view, const RpcAccess*> by_method_;
};

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_API_ACCESS_H_
