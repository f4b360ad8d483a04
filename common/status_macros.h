#ifndef PTXBENCH_COMMON_STATUS_MACROS_H_
#define PTXBENCH_COMMON_STATUS_MACROS_H_

// Propagation macros: the Abseil release in Debian 12 does not ship its own.

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define PTXB_CONCAT_INNER_(a, b) a##b
#define PTXB_CONCAT_(a, b) PTXB_CONCAT_INNER_(a, b)

// Returns the status of `expr` from the enclosing function when it is not OK.
#define PTXB_RETURN_IF_ERROR(expr)                   \
  do {                                               \
    ::absl::Status ptxb_status_ = (expr);            \
    if (!ptxb_status_.ok()) return ptxb_status_;     \
  } while (0)

// `lhs` = the value of the StatusOr `rexpr`, or returns its error.
#define PTXB_ASSIGN_OR_RETURN(lhs, rexpr) \
  PTXB_ASSIGN_OR_RETURN_IMPL_(PTXB_CONCAT_(ptxb_statusor_, __LINE__), lhs, rexpr)

#define PTXB_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                \
  if (!tmp.ok()) return std::move(tmp).status();     \
  lhs = std::move(tmp).value()

#endif  // PTXBENCH_COMMON_STATUS_MACROS_H_
