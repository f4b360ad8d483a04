// The proxy's strict request reader (client_request.h): what well-behaved
// clients send passes, in one piece or a byte at a time; each way of making
// two parsers read one request two ways is refused with its reason.
#include "agent_gateway/agent/client_request.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

namespace ptxbench::agent_gateway {
namespace {

using ::testing::HasSubstr;
using State = ClientRequestParser::State;

// Feeds `bytes` in pieces of `step` (0: at once), then the end.
ClientRequestParser Parse(const std::string& bytes, size_t step = 0, ClientRequestLimits limits = {}) {
  ClientRequestParser p(limits);
  if (step == 0) {
    p.Feed(bytes);
  } else {
    for (size_t i = 0; i < bytes.size() && p.state() != State::kError; i += step) {
      p.Feed(absl::string_view(bytes).substr(i, step));
    }
  }
  p.Finish();
  return p;
}

std::string Post(const std::string& target, const std::string& body,
                 const std::string& headers = "") {
  return absl::StrCat("POST ", target, " HTTP/1.1\r\nHost: x\r\n", headers,
                      "Content-Length: ", body.size(), "\r\n\r\n", body);
}

TEST(ClientRequestParser, AWellFormedRequestIsReadWholeAtOnceOrByteByByte) {
  const std::string raw =
      Post("/v1beta/models/m:streamGenerateContent?alt=sse", R"({"contents":[]})",
           "Content-Type: application/json\r\nanthropic-beta:  a-1,b-2  \r\n");
  for (size_t step : {0, 1, 7}) {
    SCOPED_TRACE(step);
    ClientRequestParser p = Parse(raw, step);
    ASSERT_EQ(p.state(), State::kDone) << p.error();
    EXPECT_EQ(p.request().method, "POST");
    EXPECT_EQ(p.request().path, "/v1beta/models/m:streamGenerateContent");
    ASSERT_EQ(p.request().query.size(), 1u);
    EXPECT_EQ(p.request().query[0].first, "alt");
    EXPECT_EQ(p.request().query[0].second, "sse");
    EXPECT_EQ(*p.request().Header("anthropic-beta"), "a-1,b-2");
    EXPECT_EQ(*p.request().Header("content-type"), "application/json");
    EXPECT_EQ(p.request().body, R"({"contents":[]})");
  }
}

TEST(ClientRequestParser, AChunkedBodyIsReadWithItsTrailers) {
  const std::string raw =
      "POST /v1/messages HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n"
      "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n";
  for (size_t step : {0, 1, 3}) {
    ClientRequestParser p = Parse(raw, step);
    ASSERT_EQ(p.state(), State::kDone) << p.error();
    EXPECT_EQ(p.request().body, "hello world");
  }
}

TEST(ClientRequestParser, ExpectContinueIsSaidOnceTheHeadIsRead) {
  ClientRequestParser p;
  p.Feed("POST /v1/responses HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n");
  EXPECT_EQ(p.state(), State::kNeedMore);
  EXPECT_TRUE(p.head_done());
  EXPECT_TRUE(p.expects_continue());
  EXPECT_EQ(p.Feed("{}"), State::kDone);
}

// Each case: the bytes, and the reason its refusal names.
struct Refused {
  const char* name;
  std::string raw;
  const char* why;
};

TEST(ClientRequestParser, EveryAmbiguityIsRefusedWithItsReason) {
  const std::string body = "{}";
  const Refused cases[] = {
      {"bare LF ending a header", "POST /v1/messages HTTP/1.1\r\nanthropic-beta: x\nHost: y\r\n\r\n",
       "bare LF"},
      {"bare LF inside a value",
       "POST /v1/messages HTTP/1.1\r\naccept: a\nGET /v1/organizations/api_keys HTTP/1.1\r\n\r\n",
       "bare LF"},
      {"bare CR", "POST /v1/messages HTTP/1.1\r\nanthropic-beta: x\ry\r\n\r\n", "bare CR"},
      {"LF-only head", "POST /v1/messages HTTP/1.1\nContent-Length: 0\n\n", "bare LF"},
      {"folded header", "POST /v1/messages HTTP/1.1\r\nanthropic-beta: a\r\n b\r\n\r\n", "folded"},
      {"repeated Content-Length",
       "POST /v1/messages HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
       "repeated content-length"},
      {"Content-Length and chunked",
       "POST /v1/messages HTTP/1.1\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}",
       "both Content-Length and Transfer-Encoding"},
      {"two transfer codings",
       "POST /v1/messages HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "chunked"},
      {"a signed length", "POST /v1/messages HTTP/1.1\r\nContent-Length: +2\r\n\r\n{}",
       "not a number"},
      {"a fragment", Post("/v1/messages#/v1/messages/count_tokens", body), "fragment"},
      {"a fragment in the query", Post("/v1/messages?beta=true#x", body), "fragment"},
      {"a dot segment", Post("/v1beta/models/a:x/../b:generateContent", body), "dot segment"},
      {"a single dot", Post("/v1/./messages", body), "dot segment"},
      {"an encoded slash", Post("/v1/messages%2Fcount_tokens", body), "percent-encoding"},
      {"an encoded dot", Post("/v1beta/models/%2e%2e/x", body), "percent-encoding"},
      {"a backslash", Post("/v1/messages\\count_tokens", body), "a path may not hold"},
      {"an empty segment", Post("/v1//messages", body), "empty path segment"},
      {"absolute form", Post("http://evil.example/v1/messages", body), "origin-form"},
      {"HTTP/1.0", "POST /v1/messages HTTP/1.0\r\n\r\n", "HTTP/1.1"},
      {"two spaces", "POST  /v1/messages HTTP/1.1\r\n\r\n", "request line"},
      {"a lower-case method", "post /v1/messages HTTP/1.1\r\n\r\n", "upper-case"},
      {"a NUL in a value", std::string("POST /v1/messages HTTP/1.1\r\na: b\0c\r\n\r\n", 38),
       "control"},
      {"a non-ASCII value", "POST /v1/messages HTTP/1.1\r\na: \xc3\xa9\r\n\r\n", "non-ASCII"},
      {"a space before the colon", "POST /v1/messages HTTP/1.1\r\nHost : x\r\n\r\n", "not a token"},
      {"an Expect other than continue", "POST /v1/messages HTTP/1.1\r\nExpect: x\r\n\r\n",
       "Expect"},
      {"a chunk without CRLF",
       "POST /v1/messages HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}XX0\r\n\r\n",
       "chunk without CRLF"},
      {"a chunk size in decimal words",
       "POST /v1/messages HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0x2\r\n{}\r\n0\r\n\r\n",
       "not hexadecimal"},
      {"a pipelined second request",
       Post("/v1/messages", body) + "GET /v1/organizations/api_keys HTTP/1.1\r\n\r\n",
       "more than one request"},
  };
  for (const Refused& c : cases) {
    for (size_t step : {0, 1}) {
      SCOPED_TRACE(absl::StrCat(c.name, ", step ", step));
      ClientRequestParser p = Parse(c.raw, step);
      ASSERT_EQ(p.state(), State::kError) << "accepted: " << p.request().path;
      EXPECT_EQ(p.error().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(p.error().message(), HasSubstr(c.why));
    }
  }
}

TEST(ClientRequestParser, EveryPartIsBounded) {
  ClientRequestLimits limits;
  limits.max_head_bytes = 1024;
  limits.max_body_bytes = 100;
  limits.max_headers = 4;
  auto code = [&](const std::string& raw) { return Parse(raw, 0, limits).error().code(); };
  EXPECT_EQ(code(absl::StrCat("POST /v1/messages HTTP/1.1\r\nA: ", std::string(2000, 'a'))),
            absl::StatusCode::kOutOfRange)
      << "a head that never ends";
  EXPECT_EQ(code("POST /v1/messages HTTP/1.1\r\nContent-Length: 101\r\n\r\n"),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(code("POST /v1/messages HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n"),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code("POST /v1/messages HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                 "60\r\n" + std::string(0x60, 'a') + "\r\n60\r\n"),
            absl::StatusCode::kOutOfRange)
      << "chunks that add up past the limit";
  EXPECT_EQ(code("POST / HTTP/1.1\r\na: 1\r\nb: 1\r\nc: 1\r\nd: 1\r\ne: 1\r\n\r\n"),
            absl::StatusCode::kInvalidArgument)
      << "too many headers";
  EXPECT_EQ(code("POST /v1/messages HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: " +
                 std::string(9000, 'x') + "\r\n\r\n"),
            absl::StatusCode::kInvalidArgument)
      << "trailers";
}

TEST(ClientRequestParser, ARequestCutShortIsAnError) {
  ClientRequestParser p = Parse("POST /v1/messages HTTP/1.1\r\nContent-Length: 10\r\n\r\n{}");
  EXPECT_EQ(p.state(), State::kError);
  EXPECT_THAT(p.error().message(), HasSubstr("ended mid-request"));
}

}  // namespace
}  // namespace ptxbench::agent_gateway
