#ifndef PTXBENCH_WORKER_GPU_SAMPLE_STATS_H_
#define PTXBENCH_WORKER_GPU_SAMPLE_STATS_H_

// Summary statistics of timing samples (plain C++, no CUDA).

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

}  // namespace ptxbench::gpu

#endif  // PTXBENCH_WORKER_GPU_SAMPLE_STATS_H_
