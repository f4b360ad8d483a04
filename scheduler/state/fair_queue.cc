#include "scheduler/state/fair_queue.h"

#include <algorithm>

namespace ptxbench::scheduler {

void FairQueue::SetWeight(int64_t experiment, int weight) {
  lanes_[experiment].weight = std::max(1, weight);
}

void FairQueue::Push(int64_t experiment, const std::string& key, int64_t task) {
  Lane& lane = lanes_[experiment];
  if (lane.queued == 0) lane.pass = std::max(lane.pass, virtual_time_);
  lane.by_key[key].push_back(task);
  ++lane.queued;
  ++size_;
}

std::optional<FairQueue::Popped> FairQueue::Pop(
    const std::function<bool(const std::string&)>& accept,
    const std::function<bool(int64_t)>& accept_experiment) {
  // Experiments are few (tens); keys per experiment are few (models). A scan
  // is cheaper than keeping an ordered index up to date.
  Lane* best = nullptr;
  int64_t best_experiment = 0;
  std::deque<int64_t>* best_deque = nullptr;
  const std::string* best_key = nullptr;
  std::map<std::string, bool> verdicts;
  for (auto& [experiment, lane] : lanes_) {
    if (lane.queued == 0) continue;
    if (best != nullptr && lane.pass >= best->pass) continue;
    if (accept_experiment && !accept_experiment(experiment)) continue;
    for (auto& [key, tasks] : lane.by_key) {
      if (tasks.empty()) continue;
      auto [it, inserted] = verdicts.try_emplace(key, false);
      if (inserted) it->second = accept(key);
      if (!it->second) continue;
      best = &lane;
      best_experiment = experiment;
      best_deque = &tasks;
      best_key = &key;
      break;
    }
  }
  if (best == nullptr) return std::nullopt;
  Popped popped{best_deque->front(), best_experiment, *best_key};
  best_deque->pop_front();
  --best->queued;
  --size_;
  virtual_time_ = std::max(virtual_time_, best->pass);
  best->pass += 1.0 / best->weight;
  return popped;
}

std::map<std::string, int64_t> FairQueue::SizeByKey() const {
  std::map<std::string, int64_t> out;
  for (const auto& [experiment, lane] : lanes_) {
    for (const auto& [key, tasks] : lane.by_key) out[key] += static_cast<int64_t>(tasks.size());
  }
  return out;
}

void FairQueue::RemoveExperiment(int64_t experiment) {
  auto it = lanes_.find(experiment);
  if (it == lanes_.end()) return;
  size_ -= it->second.queued;
  it->second.queued = 0;
  it->second.by_key.clear();
}

}  // namespace ptxbench::scheduler
