#ifndef PTXBENCH_COMMON_PROMETHEUS_H_
#define PTXBENCH_COMMON_PROMETHEUS_H_

// The Prometheus text exposition format (version 0.0.4), written by hand for
// the daemons' /metrics pages (docs/OBSERVABILITY.md): a Page collects
// families, each with its HELP and TYPE lines and its samples, and a
// Histogram counts observations into fixed buckets from any thread.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ptxbench::prometheus {

// Label name and value pairs, in the order written.
using Labels = std::vector<std::pair<std::string, std::string>>;

// Thread-safe. Buckets are upper bounds in increasing order; +Inf is implied.
class Histogram {
 public:
  struct Counts {
    std::vector<double> bounds;
    std::vector<uint64_t> cumulative;  // observations <= each bound
    uint64_t count = 0;                // all observations (the +Inf bucket)
    double sum = 0;
  };
  explicit Histogram(std::vector<double> bounds);
  void Observe(double value);
  void ObserveDuration(absl::Duration d) { Observe(absl::ToDoubleSeconds(d)); }
  Counts Read() const;

 private:
  const std::vector<double> bounds_;
  mutable absl::Mutex mu_;
  std::vector<uint64_t> per_bucket_ ABSL_GUARDED_BY(mu_);  // not cumulative; last is +Inf
  double sum_ ABSL_GUARDED_BY(mu_) = 0;
};

// Histogram bounds from `min_seconds` to `max_seconds` (within 1e-6..5e6):
// 1, 2.5 and 5 times each power of ten.
std::vector<double> DurationBuckets(double min_seconds, double max_seconds);

enum class Type { kCounter, kGauge, kHistogram };

// Builds one page. Not thread-safe; one per scrape. A counter's name ends in
// _total (the caller's name is checked in debug builds only: names are
// constants of the code, not input).
class Page {
 public:
  // Starts a family; the samples that follow belong to it.
  void Family(absl::string_view name, Type type, absl::string_view help);
  // A sample of the current counter or gauge family.
  void Sample(const Labels& labels, double value);
  // The current histogram family's series with `labels`: its buckets, +Inf,
  // _sum and _count.
  void Sample(const Labels& labels, const Histogram::Counts& counts);
  const std::string& text() const { return text_; }

 private:
  std::string family_;
  std::string text_;
};

// A sample value as Prometheus reads it (integers without an exponent).
std::string FormatValue(double value);
// A label value with backslash, double quote and newline escaped.
std::string EscapeLabelValue(absl::string_view value);

}  // namespace ptxbench::prometheus

#endif  // PTXBENCH_COMMON_PROMETHEUS_H_
