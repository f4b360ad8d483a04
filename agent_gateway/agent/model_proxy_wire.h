#ifndef PTXBENCH_AGENT_GATEWAY_AGENT_MODEL_PROXY_WIRE_H_
#define PTXBENCH_AGENT_GATEWAY_AGENT_MODEL_PROXY_WIRE_H_

// Internal to the model proxy (model_proxy.h): what it writes to the CLI's
// connection, what one upstream transfer brought back, and the bodies of
// the provider's token counters.

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "agents/clis.h"
#include "common/json_reader.h"

namespace ptxbench::v1 {
class Usage;
}  // namespace ptxbench::v1
#include "agent_gateway/agent/stream_usage.h"

namespace ptxbench::agent_gateway::proxy_internal {

// An error body in the API's own shape, so the CLI shows its message.
std::string ErrorBody(agents::Wire wire, int status, const std::string& message);
// The head of an answer the proxy writes: chunked, Connection: close.
std::string HttpHead(int status, absl::string_view content_type);
bool WriteAll(int fd, absl::string_view bytes);
bool WriteChunk(int fd, absl::string_view bytes);

// What one upstream transfer brought back.
struct Answered {
  bool reached = false;  // a status line came back
  int status = 0;
  std::string error;  // why not reached
  std::string content_type = "application/json";
  bool sse = false;
  bool head_sent = false;    // the head went to the CLI
  bool client_gone = false;  // the CLI's connection failed; the answer was read on
  bool passing = false;      // a plain answer too large to hold, relayed as it came
  // A plain answer held whole (relayed after it is counted), or the whole
  // answer of a transfer that relays to nobody.
  std::string body;
  std::string recorded;  // the answer as relayed, up to the record's cap
  bool recorded_truncated = false;
  TokenUsage usage;
  bool usage_whole = false;  // the provider said the answer's usage whole
};

// The usage as the protos and the registry's prices take it.
ptxbench::v1::Usage ToProto(const TokenUsage& usage);

// Relays what is left of `answer` to the CLI (its head, a held body) and
// ends the chunked answer.
void FinishRelay(int fd, Answered& answer);

// The provider's counter request for the prompt of `body` (an allowed
// model-call body of `wire`), and the count its answer holds.
std::string CounterBody(agents::Wire wire, const std::string& model, const StrictJson& body);
std::optional<int64_t> CountedTokens(agents::Wire wire, absl::string_view answer);

// curl's share of DNS answers and TLS sessions between a session's calls;
// `locks` holds one mutex per curl_lock_data kind (8).
void* NewShare(std::mutex* locks);
void FreeShare(void* share);

}  // namespace ptxbench::agent_gateway::proxy_internal

#endif  // PTXBENCH_AGENT_GATEWAY_AGENT_MODEL_PROXY_WIRE_H_
