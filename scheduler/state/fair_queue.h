#ifndef PTXBENCH_SCHEDULER_STATE_FAIR_QUEUE_H_
#define PTXBENCH_SCHEDULER_STATE_FAIR_QUEUE_H_

// Ready tasks of one kind (LLM or eval), shared between experiments by
// priority with stride scheduling: each experiment has a pass value that
// grows by 1/priority per task served, and the experiment with the lowest
// pass among those with a matching task is served next. An experiment that
// becomes active starts at the current virtual time, so a new small
// experiment is served at once but cannot claim a burst for time it was idle.
//
// Within an experiment, tasks are kept per routing key (the model for LLM
// tasks, the evaluation class for eval tasks) in FIFO order.
// Not thread-safe: owned by the scheduler's writer thread.

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace ptxbench::scheduler {

class FairQueue {
 public:
  struct Popped {
    int64_t task = 0;
    int64_t experiment = 0;
    std::string key;
  };

  // Sets an experiment's weight (priority >= 1). Unknown experiments get 1.
  void SetWeight(int64_t experiment, int weight);
  void Push(int64_t experiment, const std::string& key, int64_t task);
  // Serves the experiment with the lowest pass that has a task whose key
  // `accept` returns true for. `accept` is called once per distinct key.
  // `accept_experiment`, when given, passes over the experiments it returns
  // false for (e.g. one already running as many sessions as it may).
  std::optional<Popped> Pop(const std::function<bool(const std::string&)>& accept,
                            const std::function<bool(int64_t)>& accept_experiment = nullptr);
  // Drops every queued task of the experiment (cancel).
  void RemoveExperiment(int64_t experiment);
  int64_t size() const { return size_; }
  // Queued tasks by routing key, across experiments (for /metrics).
  std::map<std::string, int64_t> SizeByKey() const;

 private:
  struct Lane {
    int weight = 1;
    double pass = 0;
    int64_t queued = 0;
    std::map<std::string, std::deque<int64_t>> by_key;
  };
  std::map<int64_t, Lane> lanes_;
  double virtual_time_ = 0;
  int64_t size_ = 0;
};

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_STATE_FAIR_QUEUE_H_
