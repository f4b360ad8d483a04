#include "worker/gpu/sample_stats.h"

#include <algorithm>
#include <cmath>

namespace ptxbench::gpu {

SampleStats Summarize(const std::vector<double>& samples) {
  SampleStats s;
  if (samples.empty()) return s;
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  s.count = static_cast<int>(n);
  s.median = n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
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

}  // namespace ptxbench::gpu
