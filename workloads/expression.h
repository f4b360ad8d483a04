#ifndef PTXBENCH_WORKLOADS_EXPRESSION_H_
#define PTXBENCH_WORKLOADS_EXPRESSION_H_

// Integer expressions over a definition's axis names, as in shapes
// ("qk_nope_head_dim + v_head_dim") and raw-PTX launch specs
// ("(N + 127) / 128"): + - * / % and parentheses, unary minus, decimal
// numbers; / and % round toward zero like C. Evaluated in 128 bits with an
// overflow check; the text is bounded (1024 characters, nesting 64), since
// it may come from a model.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxbench::workloads {

// Evaluates one expression. kInvalidArgument for a syntax error, an unknown
// axis, division by zero or overflow, naming the expression.
absl::StatusOr<int64_t> EvaluateExpression(absl::string_view expression,
                                           const std::map<std::string, int64_t>& axes);

// Checks the syntax of `expression` and that it names only `names`, at any
// values of them. kInvalidArgument naming the problem.
absl::Status CheckExpression(absl::string_view expression, const std::vector<std::string>& names);

}  // namespace ptxbench::workloads

#endif  // PTXBENCH_WORKLOADS_EXPRESSION_H_
