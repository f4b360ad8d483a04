#ifndef PTXBENCH_WORKER_GPU_SAMPLE_STATS_H_
#define PTXBENCH_WORKER_GPU_SAMPLE_STATS_H_

// Summary statistics of timing samples (plain C++, no CUDA).

#include <string>
#include <vector>

namespace ptxbench::gpu {

struct SampleStats {
  int count = 0;
  double median = 0;  // mean of the two middle samples for an even count
  double mean = 0;
  double min = 0;
  double max = 0;
  double stdev = 0;  // sample standard deviation (n - 1); 0 for one sample
  double cv = 0;     // stdev / mean; 0 when mean is 0
};

// All zeros for an empty input.
SampleStats Summarize(const std::vector<double>& samples);

// A group of samples around one value.
struct SampleMode {
  double median = 0;
  double share = 0;  // of all the samples, 0..1
};

// The samples' modes, by value: one, or two where they split into two groups
// (per-call times of a short kernel whose hand-over between two GPU contexts
// takes one of two durations). They split at the widest gap between
// neighbouring sorted samples when each side holds at least a tenth of them
// and the gap is wider than twice either side's interquartile range and than
// 1% of the median. Empty for no samples.
std::vector<SampleMode> Modes(const std::vector<double>& samples);

// A trial's samples in words, for the logs every trace carries (its
// precision): "median 0.0310 ms (min 0.0200, max 0.0330, cv 9.50%)", then,
// where they split, "; two modes: 0.0212 ms (40%), 0.0305 ms (60%)".
std::string DescribeTrial(const std::vector<double>& samples);

}  // namespace ptxbench::gpu

#endif  // PTXBENCH_WORKER_GPU_SAMPLE_STATS_H_
