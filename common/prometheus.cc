#include "common/prometheus.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ptxbench::prometheus {

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), per_bucket_(bounds_.size() + 1, 0) {
  assert(std::is_sorted(bounds_.begin(), bounds_.end()));
}

void Histogram::Observe(double value) {
  // The first bound >= value: Prometheus buckets are "less than or equal".
  const size_t bucket = static_cast<size_t>(
      std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin());
  absl::MutexLock lock(&mu_);
  per_bucket_[bucket] += 1;
  sum_ += value;
}

Histogram::Counts Histogram::Read() const {
  Counts out;
  out.bounds = bounds_;
  absl::MutexLock lock(&mu_);
  uint64_t running = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    running += per_bucket_[i];
    out.cumulative.push_back(running);
  }
  out.count = running + per_bucket_.back();
  out.sum = sum_;
  return out;
}

std::vector<double> DurationBuckets(double min_seconds, double max_seconds) {
  std::vector<double> out;
  // step / 10^k, not a running product: each bound is then the double
  // nearest its decimal, and prints as that decimal.
  for (int exponent = -6; exponent <= 6; ++exponent) {
    const double power = std::pow(10.0, std::abs(exponent));
    for (double step : {1.0, 2.5, 5.0}) {
      const double bound = exponent < 0 ? step / power : step * power;
      if (bound >= min_seconds && bound <= max_seconds) out.push_back(bound);
    }
  }
  return out;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return absl::StrFormat("%.15g", value);
}

std::string EscapeLabelValue(absl::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char ch : value) {
    if (ch == '\\') {
      out += "\\\\";
    } else if (ch == '"') {
      out += "\\\"";
    } else if (ch == '\n') {
      out += "\\n";
    } else {
      out += ch;
    }
  }
  return out;
}

namespace {

const char* TypeName(Type type) {
  switch (type) {
    case Type::kCounter:
      return "counter";
    case Type::kGauge:
      return "gauge";
    case Type::kHistogram:
      return "histogram";
  }
  return "untyped";
}

// `{a="x",b="y"}`, or "" without labels; `extra` (le) goes last.
std::string LabelText(const Labels& labels, const std::pair<std::string, std::string>* extra) {
  if (labels.empty() && extra == nullptr) return "";
  std::string out = "{";
  auto add = [&out](const std::pair<std::string, std::string>& l) {
    if (out.size() > 1) out += ",";
    absl::StrAppend(&out, l.first, "=\"", EscapeLabelValue(l.second), "\"");
  };
  for (const auto& l : labels) add(l);
  if (extra != nullptr) add(*extra);
  return out + "}";
}

}  // namespace

void Page::Family(absl::string_view name, Type type, absl::string_view help) {
  assert(type != Type::kCounter || absl::EndsWith(name, "_total"));
  family_ = std::string(name);
  absl::StrAppend(&text_, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", TypeName(type),
                  "\n");
}

void Page::Sample(const Labels& labels, double value) {
  absl::StrAppend(&text_, family_, LabelText(labels, nullptr), " ", FormatValue(value), "\n");
}

void Page::Sample(const Labels& labels, const Histogram::Counts& counts) {
  for (size_t i = 0; i < counts.bounds.size(); ++i) {
    const std::pair<std::string, std::string> le{"le", FormatValue(counts.bounds[i])};
    absl::StrAppend(&text_, family_, "_bucket", LabelText(labels, &le), " ",
                    FormatValue(static_cast<double>(counts.cumulative[i])), "\n");
  }
  const std::pair<std::string, std::string> inf{"le", "+Inf"};
  absl::StrAppend(&text_, family_, "_bucket", LabelText(labels, &inf), " ",
                  FormatValue(static_cast<double>(counts.count)), "\n");
  absl::StrAppend(&text_, family_, "_sum", LabelText(labels, nullptr), " ",
                  FormatValue(counts.sum), "\n");
  absl::StrAppend(&text_, family_, "_count", LabelText(labels, nullptr), " ",
                  FormatValue(static_cast<double>(counts.count)), "\n");
}

}  // namespace ptxbench::prometheus
