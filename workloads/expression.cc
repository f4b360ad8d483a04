#include "workloads/expression.h"

#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace ptxbench::workloads {
namespace {

// Recursive descent over: expr = term {(+|-) term}; term = factor {(*|/|%)
// factor}; factor = [-] (number | axis | "(" expr ")").
class Parser {
 public:
  // `check_only`: the syntax and the names are checked, no value matters
  // (every intermediate result is 1).
  Parser(absl::string_view text, const std::map<std::string, int64_t>& axes,
         bool check_only = false)
      : text_(text), axes_(axes), check_only_(check_only) {}

  absl::StatusOr<int64_t> Parse() {
    if (text_.size() > kMaxExpressionLength) {
      return absl::InvalidArgumentError(absl::StrCat("expression of ", text_.size(),
                                                     " characters (at most ",
                                                     kMaxExpressionLength, ")"));
    }
    absl::StatusOr<int64_t> v = Expr();
    if (!v.ok()) return v;
    Skip();
    if (pos_ != text_.size()) return Error(absl::StrCat("unexpected '", text_.substr(pos_, 1), "'"));
    return v;
  }

 private:
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("expression \"", text_, "\": ", what));
  }
  void Skip() {
    while (pos_ < text_.size() && absl::ascii_isspace(text_[pos_])) ++pos_;
  }
  bool Eat(char c) {
    Skip();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  absl::StatusOr<int64_t> Checked(__int128 v) const {
    if (check_only_) return 1;
    if (v > std::numeric_limits<int64_t>::max() || v < std::numeric_limits<int64_t>::min()) {
      return Error("overflow");
    }
    return static_cast<int64_t>(v);
  }
  absl::StatusOr<int64_t> Expr() {
    absl::StatusOr<int64_t> left = Term();
    while (left.ok()) {
      if (Eat('+')) {
        absl::StatusOr<int64_t> r = Term();
        if (!r.ok()) return r;
        left = Checked(static_cast<__int128>(*left) + *r);
      } else if (Eat('-')) {
        absl::StatusOr<int64_t> r = Term();
        if (!r.ok()) return r;
        left = Checked(static_cast<__int128>(*left) - *r);
      } else {
        break;
      }
    }
    return left;
  }
  absl::StatusOr<int64_t> Term() {
    absl::StatusOr<int64_t> left = Factor();
    while (left.ok()) {
      char op = 0;
      if (Eat('*')) op = '*';
      else if (Eat('/')) op = '/';
      else if (Eat('%')) op = '%';
      else break;
      absl::StatusOr<int64_t> r = Factor();
      if (!r.ok()) return r;
      if (op == '*') {
        left = Checked(static_cast<__int128>(*left) * *r);
      } else if (*r == 0) {
        return Error("division by zero");
      } else {
        // In 128 bits: INT64_MIN / -1 does not fit (and traps in 64).
        const __int128 l = *left, d = *r;
        left = Checked(op == '/' ? l / d : l % d);
      }
    }
    return left;
  }
  absl::StatusOr<int64_t> Factor() {
    // Model text decides the nesting: bounded, so no input can exhaust the stack.
    if (++depth_ > kMaxDepth) return Error("nested too deeply");
    absl::StatusOr<int64_t> v = Primary();
    --depth_;
    return v;
  }
  absl::StatusOr<int64_t> Primary() {
    if (Eat('-')) {
      absl::StatusOr<int64_t> v = Factor();
      if (!v.ok()) return v;
      return Checked(-static_cast<__int128>(*v));
    }
    if (Eat('(')) {
      absl::StatusOr<int64_t> v = Expr();
      if (!v.ok()) return v;
      if (!Eat(')')) return Error("missing ')'");
      return v;
    }
    Skip();
    const size_t start = pos_;
    if (pos_ < text_.size() && absl::ascii_isdigit(text_[pos_])) {
      __int128 v = 0;
      while (pos_ < text_.size() && absl::ascii_isdigit(text_[pos_])) {
        v = v * 10 + (text_[pos_++] - '0');
        if (v > std::numeric_limits<int64_t>::max()) return Error("number too large");
      }
      return static_cast<int64_t>(v);
    }
    while (pos_ < text_.size() && (absl::ascii_isalnum(text_[pos_]) || text_[pos_] == '_')) ++pos_;
    if (start == pos_) {
      return Error(pos_ < text_.size() ? absl::StrCat("unexpected '", text_.substr(pos_, 1), "'")
                                       : "unexpected end");
    }
    const std::string name(text_.substr(start, pos_ - start));
    auto it = axes_.find(name);
    if (it == axes_.end()) return Error(absl::StrCat("unknown axis '", name, "'"));
    return it->second;
  }

  static constexpr int kMaxDepth = 64;
  static constexpr size_t kMaxExpressionLength = 1024;

  absl::string_view text_;
  const std::map<std::string, int64_t>& axes_;
  const bool check_only_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

absl::StatusOr<int64_t> EvaluateExpression(absl::string_view expression,
                                           const std::map<std::string, int64_t>& axes) {
  return Parser(expression, axes).Parse();
}

absl::Status CheckExpression(absl::string_view expression, const std::vector<std::string>& names) {
  std::map<std::string, int64_t> ones;
  for (const std::string& name : names) ones[name] = 1;
  return Parser(expression, ones, /*check_only=*/true).Parse().status();
}

}  // namespace ptxbench::workloads
