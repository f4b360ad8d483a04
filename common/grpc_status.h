#ifndef PTXBENCH_COMMON_GRPC_STATUS_H_
#define PTXBENCH_COMMON_GRPC_STATUS_H_

// The one conversion between absl::Status (below the RPC edge) and
// grpc::Status (at it). Codes share numbering, so the mapping is exact.

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace ptxbench {

grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace ptxbench

#endif  // PTXBENCH_COMMON_GRPC_STATUS_H_
