// One HTTP/1.1 request, read strictly (client_request.h).
#include "agent_gateway/agent/client_request.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace ptxbench::agent_gateway {
namespace {

// RFC 9110 token characters (header names, methods).
bool IsToken(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
         absl::string_view("!#$%&'*+-.^_`|~").find(c) != absl::string_view::npos;
}

// RFC 3986 pchar without pct-encoded: unreserved, sub-delims, ':' and '@'.
bool IsPathChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
         absl::string_view("-._~!$&'()*+,;=:@").find(c) != absl::string_view::npos;
}

// A query name or value: path characters but the pair separators.
bool IsQueryChar(char c) { return c != '&' && c != '=' && (IsPathChar(c) || c == '/' || c == '?'); }

// Visible ASCII and inner spaces or tabs (RFC 9110 field-vchar without
// obs-text: no header a client needs carries other bytes).
bool IsFieldChar(char c) { return (c >= 0x21 && c <= 0x7e) || c == ' ' || c == '\t'; }

absl::Status Malformed(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("malformed request: ", what));
}

absl::Status CheckTarget(absl::string_view target, ClientRequest* r) {
  if (target.empty() || target[0] != '/') {
    return Malformed("the target must be a path (origin-form), e.g. /v1/messages");
  }
  const size_t question = target.find('?');
  const absl::string_view path = target.substr(0, question);
  for (char c : path) {
    if (c == '/') continue;
    if (c == '%') return Malformed("percent-encoding in the path");
    if (c == '#') return Malformed("a fragment in the target");
    if (!IsPathChar(c)) return Malformed("a character a path may not hold");
  }
  for (absl::string_view segment : absl::StrSplit(path.substr(1), '/')) {
    if (path.size() == 1) break;  // "/": no segment
    if (segment.empty()) return Malformed("an empty path segment (//)");
    if (segment == "." || segment == "..") return Malformed("a dot segment in the path");
  }
  r->path = std::string(path);
  if (question == absl::string_view::npos) return absl::OkStatus();
  const absl::string_view query = target.substr(question + 1);
  if (query.empty()) return absl::OkStatus();
  for (absl::string_view pair : absl::StrSplit(query, '&')) {
    const size_t eq = pair.find('=');
    const absl::string_view name = pair.substr(0, eq);
    const absl::string_view value = eq == absl::string_view::npos ? "" : pair.substr(eq + 1);
    if (name.empty()) return Malformed("an empty query parameter");
    for (char c : absl::StrCat(name, value)) {
      if (c == '#') return Malformed("a fragment in the target");
      if (c == '%') return Malformed("percent-encoding in the query");
      if (!IsQueryChar(c)) return Malformed("a character a query may not hold");
    }
    r->query.emplace_back(std::string(name), std::string(value));
  }
  return absl::OkStatus();
}

// Framing and routing headers a request carries at most once: a repeated
// one is how one request is read two ways by two parsers.
bool Unique(absl::string_view name) {
  for (absl::string_view u : {"content-length", "transfer-encoding", "content-type",
                              "content-encoding", "expect", "host"}) {
    if (name == u) return true;
  }
  return false;
}

absl::Status CheckHeader(absl::string_view line, std::string* name, std::string* value) {
  if (!line.empty() && (line[0] == ' ' || line[0] == '\t')) {
    return Malformed("a folded header line (obs-fold)");
  }
  const size_t colon = line.find(':');
  if (colon == absl::string_view::npos || colon == 0) return Malformed("a header without a name");
  for (char c : line.substr(0, colon)) {
    if (!IsToken(c)) return Malformed("a header name that is not a token");
  }
  for (char c : line.substr(colon + 1)) {
    if (!IsFieldChar(c)) return Malformed("a header value with a control or non-ASCII byte");
  }
  *name = absl::AsciiStrToLower(line.substr(0, colon));
  *value = std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
  return absl::OkStatus();
}

}  // namespace

const std::string* ClientRequest::Header(absl::string_view name) const {
  for (const auto& [n, v] : headers) {
    if (n == name) return &v;
  }
  return nullptr;
}

ClientRequestParser::State ClientRequestParser::Fail(absl::Status status) {
  error_ = std::move(status);
  buffer_.clear();
  pos_ = 0;
  return state_ = State::kError;
}

ClientRequestParser::State ClientRequestParser::Feed(absl::string_view bytes) {
  if (state_ != State::kNeedMore) {
    if (state_ == State::kDone && !bytes.empty()) {
      return Fail(Malformed("more than one request on a connection"));
    }
    return state_;
  }
  buffer_.append(bytes.data(), bytes.size());
  return Run();
}

ClientRequestParser::State ClientRequestParser::Finish() {
  if (state_ == State::kNeedMore) return Fail(Malformed("the connection ended mid-request"));
  return state_;
}

bool ClientRequestParser::Line(size_t max, absl::string_view* line, bool* failed) {
  const size_t lf = buffer_.find('\n', pos_);
  if (lf == std::string::npos) {
    if (buffer_.size() - pos_ > max) {
      *failed = true;
      Fail(Malformed("a line too long"));
    }
    return false;
  }
  if (lf == pos_ || buffer_[lf - 1] != '\r' || lf - pos_ > max + 1) {
    *failed = true;
    Fail(Malformed(lf - pos_ > max + 1 ? "a line too long" : "a bare LF"));
    return false;
  }
  *line = absl::string_view(buffer_).substr(pos_, lf - 1 - pos_);
  if (line->find('\r') != absl::string_view::npos) {
    *failed = true;
    Fail(Malformed("a bare CR"));
    return false;
  }
  pos_ = lf + 1;
  return true;
}

ClientRequestParser::State ClientRequestParser::ParseHead(absl::string_view head) {
  // Every LF ends a line with CR before it; no CR stands alone.
  for (size_t i = 0; i < head.size(); ++i) {
    if (head[i] == '\n' && (i == 0 || head[i - 1] != '\r')) return Fail(Malformed("a bare LF"));
    if (head[i] == '\r' && (i + 1 >= head.size() || head[i + 1] != '\n')) {
      return Fail(Malformed("a bare CR"));
    }
  }
  std::vector<absl::string_view> lines = absl::StrSplit(head, "\r\n");
  const std::vector<absl::string_view> first = absl::StrSplit(lines[0], ' ');
  if (first.size() != 3 || first[0].empty() || first[0].size() > 16) {
    return Fail(Malformed("the request line is not METHOD TARGET HTTP/1.1"));
  }
  for (char c : first[0]) {
    if (!absl::ascii_isupper(static_cast<unsigned char>(c))) {
      return Fail(Malformed("the method is not an upper-case token"));
    }
  }
  if (first[2] != "HTTP/1.1") return Fail(Malformed("only HTTP/1.1 is spoken here"));
  request_.method = std::string(first[0]);
  if (absl::Status s = CheckTarget(first[1], &request_); !s.ok()) return Fail(s);
  if (static_cast<int>(lines.size()) - 1 > limits_.max_headers) {
    return Fail(Malformed(absl::StrCat("more than ", limits_.max_headers, " headers")));
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    std::string name, value;
    if (absl::Status s = CheckHeader(lines[i], &name, &value); !s.ok()) return Fail(s);
    if (Unique(name) && request_.Header(name) != nullptr) {
      return Fail(Malformed(absl::StrCat("a repeated ", name, " header")));
    }
    request_.headers.emplace_back(std::move(name), std::move(value));
  }
  const std::string* length = request_.Header("content-length");
  const std::string* encoding = request_.Header("transfer-encoding");
  if (length != nullptr && encoding != nullptr) {
    return Fail(Malformed("both Content-Length and Transfer-Encoding"));
  }
  if (const std::string* expect = request_.Header("expect"); expect != nullptr) {
    if (!absl::EqualsIgnoreCase(*expect, "100-continue")) return Fail(Malformed("an Expect header"));
    expects_continue_ = true;
  }
  if (encoding != nullptr) {
    if (!absl::EqualsIgnoreCase(*encoding, "chunked")) {
      return Fail(Malformed("a transfer coding other than chunked"));
    }
    phase_ = Phase::kChunkSize;
    return State::kNeedMore;
  }
  remaining_ = 0;
  if (length != nullptr) {
    if (length->empty() || length->size() > 18 ||
        length->find_first_not_of("0123456789") != std::string::npos ||
        !absl::SimpleAtoi(*length, &remaining_)) {
      return Fail(Malformed("a Content-Length that is not a number"));
    }
    if (remaining_ > limits_.max_body_bytes) {
      return Fail(absl::OutOfRangeError(absl::StrCat("request body too large (more than ",
                                                     limits_.max_body_bytes, " bytes)")));
    }
  }
  phase_ = Phase::kLengthBody;
  return State::kNeedMore;
}

bool ClientRequestParser::TakeBody() {
  const size_t take = static_cast<size_t>(std::min<uint64_t>(remaining_, buffer_.size() - pos_));
  request_.body.append(buffer_, pos_, take);
  pos_ += take;
  remaining_ -= take;
  if (remaining_ == 0) return true;
  buffer_.clear();  // all of it was body
  pos_ = 0;
  return false;
}

ClientRequestParser::State ClientRequestParser::Run() {
  for (;;) {
    bool failed = false;
    absl::string_view line;
    switch (phase_) {
      case Phase::kHead: {
        // A bare LF is refused as it arrives (a head that never ends in
        // CRLFCRLF would otherwise hold the connection to its deadline).
        for (size_t i = std::max<size_t>(scanned_, 1); i < buffer_.size(); ++i) {
          if (buffer_[i] == '\n' && buffer_[i - 1] != '\r') return Fail(Malformed("a bare LF"));
        }
        if (!buffer_.empty() && buffer_[0] == '\n') return Fail(Malformed("a bare LF"));
        const size_t end = buffer_.find("\r\n\r\n", scanned_ < 3 ? 0 : scanned_ - 3);
        scanned_ = buffer_.size();
        if (end == std::string::npos) {
          if (buffer_.size() > limits_.max_head_bytes) {
            return Fail(absl::OutOfRangeError("request head too large"));
          }
          return State::kNeedMore;
        }
        if (end + 4 > limits_.max_head_bytes) {
          return Fail(absl::OutOfRangeError("request head too large"));
        }
        if (ParseHead(absl::string_view(buffer_).substr(0, end)) == State::kError) return state_;
        pos_ = end + 4;
        break;
      }
      case Phase::kLengthBody:
        if (!TakeBody()) return State::kNeedMore;
        phase_ = Phase::kEnd;
        break;
      case Phase::kChunkSize: {
        if (!Line(256, &line, &failed)) return failed ? state_ : State::kNeedMore;
        const absl::string_view size = line.substr(0, line.find(';'));
        if (size.empty() || size.size() > 8 ||
            size.find_first_not_of("0123456789abcdefABCDEF") != absl::string_view::npos ||
            !absl::SimpleHexAtoi(size, &remaining_)) {
          return Fail(Malformed("a chunk size that is not hexadecimal"));
        }
        for (char c : line.substr(size.size())) {
          if (!IsFieldChar(c)) return Fail(Malformed("a chunk extension with a control byte"));
        }
        if (remaining_ > limits_.max_body_bytes - request_.body.size()) {
          return Fail(absl::OutOfRangeError(absl::StrCat("request body too large (more than ",
                                                         limits_.max_body_bytes, " bytes)")));
        }
        phase_ = remaining_ == 0 ? Phase::kTrailers : Phase::kChunkData;
        break;
      }
      case Phase::kChunkData:
        if (!TakeBody()) return State::kNeedMore;
        phase_ = Phase::kChunkDataEnd;
        break;
      case Phase::kChunkDataEnd:
        if (buffer_.size() - pos_ < 2) return State::kNeedMore;
        if (buffer_.compare(pos_, 2, "\r\n") != 0) return Fail(Malformed("a chunk without CRLF"));
        pos_ += 2;
        phase_ = Phase::kChunkSize;
        break;
      case Phase::kTrailers: {
        if (!Line(8 << 10, &line, &failed)) return failed ? state_ : State::kNeedMore;
        if (line.empty()) {
          phase_ = Phase::kEnd;
          break;
        }
        trailer_bytes_ += line.size() + 2;
        std::string name, value;
        if (absl::Status s = CheckHeader(line, &name, &value); !s.ok()) return Fail(s);
        if (trailer_bytes_ > (8 << 10)) return Fail(Malformed("trailers too large"));
        break;  // trailers are read and dropped
      }
      case Phase::kEnd:
        if (pos_ < buffer_.size()) return Fail(Malformed("more than one request on a connection"));
        buffer_.clear();
        pos_ = 0;
        return state_ = State::kDone;
    }
    // Keep the unread tail only: a long body does not grow the buffer.
    if (pos_ > (64 << 10)) {
      buffer_.erase(0, pos_);
      pos_ = 0;
    }
  }
}

}  // namespace ptxbench::agent_gateway
