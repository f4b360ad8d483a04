#ifndef PTXBENCH_AGENT_GATEWAY_AGENT_CLIENT_REQUEST_H_
#define PTXBENCH_AGENT_GATEWAY_AGENT_CLIENT_REQUEST_H_

// The model proxy's reader of one HTTP/1.1 request (model_proxy.h), written
// for hostile clients: an agent's shell reaches the proxy through the relay
// and can send any bytes. Nothing read here is ever forwarded as text; the
// proxy builds its upstream request from what this reader accepted. So the
// reader accepts only what a well-behaved client sends, and refuses the
// rest with a reason:
//  - the request line: `METHOD SP origin-form SP HTTP/1.1`, one space each;
//    the target a path of segments of RFC 3986 path characters, no empty,
//    `.` or `..` segment, no `%` (so no encoded slash, dot or byte), no
//    fragment, no backslash; an optional query of `name=value` pairs of the
//    same characters;
//  - header lines end in CRLF: a bare CR or LF anywhere in the head is
//    refused, as is a line folded onto the next (obs-fold); names are
//    tokens; values are visible ASCII with inner spaces and tabs; at most
//    kMaxHeaders;
//  - framing: Content-Length (digits only) or `Transfer-Encoding: chunked`,
//    never both, neither repeated; chunked bodies read strictly (hex sizes,
//    CRLF after each chunk, bounded extensions and trailers);
//  - the head, the body, the chunk lines and the trailers have bounds; a
//    request followed by more bytes (a second, pipelined request) is
//    refused: one connection carries one request.
//
// ClientRequestParser is fed bytes as they arrive and says when the request
// is whole; it holds no descriptor, so the fuzz target drives it directly.

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ptxbench::agent_gateway {

struct ClientRequest {
  std::string method;
  std::string path;  // as sent, checked (no query)
  // The query's pairs, in order, as sent (checked, not decoded).
  std::vector<std::pair<std::string, std::string>> query;
  // Names lower-cased, values trimmed of surrounding spaces; in order.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  // The value of header `name` (lower-case), or nullptr. Framing headers
  // are never repeated; for another repeated header, the first.
  const std::string* Header(absl::string_view name) const;
};

struct ClientRequestLimits {
  size_t max_head_bytes = 64 << 10;
  size_t max_body_bytes = 16 << 20;
  int max_headers = 64;
};

class ClientRequestParser {
 public:
  static constexpr int kMaxHeaders = 64;

  enum class State {
    kNeedMore,  // feed more bytes
    kDone,      // request() is whole
    kError,     // error() says why; the connection is answered and closed
  };

  explicit ClientRequestParser(ClientRequestLimits limits = {}) : limits_(limits) {}

  // Takes the next bytes of the connection.
  State Feed(absl::string_view bytes);
  // The connection ended (EOF): an incomplete request becomes an error.
  State Finish();

  State state() const { return state_; }
  // INVALID_ARGUMENT (malformed) or OUT_OF_RANGE (too large), in words.
  const absl::Status& error() const { return error_; }
  // Valid in kDone; may be moved from.
  ClientRequest& request() { return request_; }
  // The head has been read and asks for `Expect: 100-continue`: the caller
  // may answer "100 Continue" before the body comes.
  bool expects_continue() const { return expects_continue_; }
  bool head_done() const { return phase_ != Phase::kHead; }

 private:
  enum class Phase { kHead, kLengthBody, kChunkSize, kChunkData, kChunkDataEnd, kTrailers, kEnd };

  State Fail(absl::Status status);
  State Run();
  State ParseHead(absl::string_view head);
  // Consumes one CRLF-terminated line from buffer_ at pos_ into `line`;
  // false when it is not complete yet. A bare LF or CR fails.
  bool Line(size_t max, absl::string_view* line, bool* failed);
  // Moves up to remaining_ bytes of body from the buffer; true when the
  // body (or chunk) is whole.
  bool TakeBody();

  const ClientRequestLimits limits_;
  State state_ = State::kNeedMore;
  Phase phase_ = Phase::kHead;
  absl::Status error_;
  ClientRequest request_;
  std::string buffer_;  // bytes not yet consumed, from pos_
  size_t pos_ = 0;
  uint64_t remaining_ = 0;  // of the body (kLengthBody) or the chunk
  size_t trailer_bytes_ = 0;
  size_t scanned_ = 0;  // head bytes already searched for its end
  bool expects_continue_ = false;
};

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_AGENT_CLIENT_REQUEST_H_
