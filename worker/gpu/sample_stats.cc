#include "worker/gpu/sample_stats.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"

namespace ptxbench::gpu {

namespace {

// Of sorted[begin, end): the median, and the interquartile range.
double MedianOf(const std::vector<double>& sorted, size_t begin, size_t end) {
  const size_t n = end - begin;
  return n % 2 == 1 ? sorted[begin + n / 2]
                    : 0.5 * (sorted[begin + n / 2 - 1] + sorted[begin + n / 2]);
}
double IqrOf(const std::vector<double>& sorted, size_t begin, size_t end) {
  const size_t n = end - begin;
  return sorted[begin + std::min(n - 1, (3 * n) / 4)] - sorted[begin + n / 4];
}

}  // namespace

SampleStats Summarize(const std::vector<double>& samples) {
  SampleStats s;
  if (samples.empty()) return s;
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  s.count = static_cast<int>(n);
  s.median = MedianOf(sorted, 0, n);
  s.min = sorted.front();
  s.max = sorted.back();
  double sum = 0;
  for (double x : sorted) sum += x;
  s.mean = sum / static_cast<double>(n);
  if (n > 1) {
    double sq = 0;
    for (double x : sorted) sq += (x - s.mean) * (x - s.mean);
    s.stdev = std::sqrt(sq / static_cast<double>(n - 1));
  }
  s.cv = s.mean != 0 ? s.stdev / s.mean : 0;
  return s;
}

std::vector<SampleMode> Modes(const std::vector<double>& samples) {
  if (samples.empty()) return {};
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  const size_t least = std::max<size_t>(2, (n + 9) / 10);
  size_t split = 0;
  double widest = 0;
  for (size_t i = least; i + least <= n; ++i) {
    const double gap = sorted[i] - sorted[i - 1];
    if (gap > widest) {
      widest = gap;
      split = i;
    }
  }
  const double median = MedianOf(sorted, 0, n);
  if (split != 0 && widest > 0.01 * std::abs(median) &&
      widest > 2 * IqrOf(sorted, 0, split) && widest > 2 * IqrOf(sorted, split, n)) {
    return {SampleMode{MedianOf(sorted, 0, split), static_cast<double>(split) / n},
            SampleMode{MedianOf(sorted, split, n), static_cast<double>(n - split) / n}};
  }
  return {SampleMode{median, 1.0}};
}

std::string DescribeTrial(const std::vector<double>& samples) {
  const SampleStats s = Summarize(samples);
  std::string text = absl::StrFormat("median %.4f ms (min %.4f, max %.4f, cv %.2f%%)", s.median,
                                     s.min, s.max, 100 * s.cv);
  const std::vector<SampleMode> modes = Modes(samples);
  if (modes.size() == 2) {
    absl::StrAppendFormat(&text, "; two modes: %.4f ms (%.0f%%), %.4f ms (%.0f%%)",
                          modes[0].median, 100 * modes[0].share, modes[1].median,
                          100 * modes[1].share);
  }
  return text;
}

}  // namespace ptxbench::gpu
