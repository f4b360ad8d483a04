#ifndef PTXBENCH_AGENT_GATEWAY_PROVIDERS_GATEWAY_METRICS_H_
#define PTXBENCH_AGENT_GATEWAY_PROVIDERS_GATEWAY_METRICS_H_

// What a gateway has done, per model: calls waiting for the model's limits,
// in flight, finished by outcome, re-asked steps, tokens and cost. Shown as
// Prometheus text (/metrics) and as a structured stats log line, both from
// one table of counters.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/log.h"
#include "ptxbench/v1/common.pb.h"

namespace ptxbench::agent_gateway {

struct ModelCounters {
  int64_t waiting = 0;    // queued for the model's limits
  int64_t in_flight = 0;  // provider calls started, not ended
  int64_t answered = 0;
  int64_t truncated = 0;     // answered with finish_reason "length"
  int64_t failed_retry = 0;  // MODEL_API: the scheduler asks again
  int64_t failed_terminal = 0;
  int64_t refused_early = 0;  // context too long, caught before paying
  int64_t reasked = 0;        // steps leased again after a failure or crash
  int64_t input_tokens = 0, output_tokens = 0, reasoning_tokens = 0, cached_tokens = 0;
  double cost_usd = 0;
};

// Thread-safe.
class GatewayMetrics {
 public:
  void Queued(const std::string& model, bool reasked);
  void Started(const std::string& model);  // left the queue for the provider
  void Dequeued(const std::string& model);  // left the queue without a call
  void RefusedEarly(const std::string& model);
  // A provider call ended with `response` (nullptr: failed, of `failure`).
  void Ended(const std::string& model, const ptxbench::v1::LlmResponse* response,
             ptxbench::v1::FailureClass failure);

  std::map<std::string, ModelCounters> Snapshot() const;
  // Prometheus text exposition format, one family per counter.
  std::string Prometheus() const;
  // The stats log line's fields for one model: model=NAME, then each counter.
  static std::vector<LogField> LogFields(const std::string& model, const ModelCounters& c);

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, ModelCounters> models_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_PROVIDERS_GATEWAY_METRICS_H_
