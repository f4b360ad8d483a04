// The dashboard's HTTP side against a fake ClientService that checks tokens
// the way the scheduler does (metadata `authorization: Bearer <token>`, a
// role per RPC): the session gate, sign-in and sign-out, the cookie, CSRF,
// expiry, revocation, what the API and pages carry, and TLS. The pages in a
// browser are tests/dashboard_browser_test.cc.

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "dashboard/server.h"
#include "dashboard/web_security.h"
#include "gmock/gmock.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "ptxbench/v1/client.grpc.pb.h"
#include "results/report/html.h"
#include "results/report/testing/sample_report.h"
#include "testing/tls.h"

namespace ptxbench::dashboard {
namespace {

namespace v1 = ::ptxbench::v1;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kHostileName[] = "<img src=x onerror=alert(1)>&\"'";

// ClientService as far as the dashboard uses it, with the scheduler's rule:
// an unknown token is UNAUTHENTICATED, a known one below the RPC's role is
// PERMISSION_DENIED.
class FakeClientService final : public v1::ClientService::CallbackService {
 public:
  FakeClientService() {
    roles_["read-token"] = v1::ROLE_READ;
    roles_["submit-token"] = v1::ROLE_SUBMIT;
    roles_["worker-token"] = v1::ROLE_WORKER;
    roles_["hostile-token"] = v1::ROLE_READ;
  }

  void Revoke(const std::string& token) {
    absl::MutexLock lock(&mu_);
    roles_.erase(token);
  }
  int cancels() const { return cancels_.load(); }
  v1::ReportRequest last_report() {
    absl::MutexLock lock(&mu_);
    return last_report_;
  }

  grpc::ServerUnaryReactor* WhoAmI(grpc::CallbackServerContext* ctx, const v1::WhoAmIRequest*,
                                   v1::WhoAmIResponse* response) override {
    grpc::Status status = Check(ctx, v1::ROLE_WORKER);
    if (status.ok()) {
      const std::string token = TokenOf(ctx);
      response->set_name(token == "hostile-token" ? kHostileName : token + "-name");
      absl::MutexLock lock(&mu_);
      response->set_role(roles_[token]);
    }
    return Finish(ctx, status);
  }
  grpc::ServerUnaryReactor* ListExperiments(grpc::CallbackServerContext* ctx,
                                            const v1::ListExperimentsRequest*,
                                            v1::ListExperimentsResponse* response) override {
    v1::GetExperimentResponse* e = response->add_experiments();
    e->mutable_experiment()->set_experiment_id("ex_1");
    e->mutable_experiment()->set_name(kHostileName);
    e->mutable_progress()->set_total(12);
    return Finish(ctx, Check(ctx, v1::ROLE_READ));
  }
  grpc::ServerUnaryReactor* ListTrajectories(grpc::CallbackServerContext* ctx,
                                             const v1::ListTrajectoriesRequest* request,
                                             v1::ListTrajectoriesResponse* response) override {
    response->set_total(request->limit() * 1000 + request->offset());  // echoes them
    return Finish(ctx, Check(ctx, v1::ROLE_READ));
  }
  // Like the scheduler: the records' contents only for the one asked for.
  grpc::ServerUnaryReactor* GetTrajectory(grpc::CallbackServerContext* ctx,
                                          const v1::GetTrajectoryRequest* request,
                                          v1::GetTrajectoryResponse* response) override {
    v1::Trajectory* t = response->mutable_trajectory();
    t->mutable_summary()->set_trajectory_id(request->trajectory_id());
    t->set_system_prompt("system");
    for (const char* name : {"events.jsonl", "workspace/kernel.cu"}) {
      v1::AgentRecord* r = t->mutable_agent()->add_records();
      r->set_name(name);
      r->set_size(5);
      if (request->agent_record() == name) r->set_content(absl::StrCat("text of ", name));
    }
    return Finish(ctx, Check(ctx, v1::ROLE_READ));
  }
  grpc::ServerUnaryReactor* GetReport(grpc::CallbackServerContext* ctx,
                                      const v1::ReportRequest* request,
                                      v1::ReportResponse* response) override {
    *response = report::testing::SampleReport();
    {
      absl::MutexLock lock(&mu_);
      last_report_ = *request;
    }
    return Finish(ctx, Check(ctx, v1::ROLE_READ));
  }
  grpc::ServerUnaryReactor* Cancel(grpc::CallbackServerContext* ctx, const v1::CancelRequest*,
                                   v1::CancelResponse* response) override {
    grpc::Status status = Check(ctx, v1::ROLE_SUBMIT);
    if (status.ok()) {
      ++cancels_;
      response->set_cancelled(3);
    }
    return Finish(ctx, status);
  }

 private:
  static std::string TokenOf(grpc::CallbackServerContext* ctx) {
    auto it = ctx->client_metadata().find("authorization");
    if (it == ctx->client_metadata().end()) return "";
    std::string value(it->second.data(), it->second.size());
    return value.rfind("Bearer ", 0) == 0 ? value.substr(7) : "";
  }
  // Lower enum values are the stronger roles, worker and gateway aside.
  grpc::Status Check(grpc::CallbackServerContext* ctx, v1::Role needed) {
    absl::MutexLock lock(&mu_);
    auto it = roles_.find(TokenOf(ctx));
    if (it == roles_.end()) return {grpc::StatusCode::UNAUTHENTICATED, "unknown token"};
    if (needed == v1::ROLE_WORKER) return grpc::Status::OK;
    if (it->second == v1::ROLE_WORKER || it->second > needed) {
      return {grpc::StatusCode::PERMISSION_DENIED,
              absl::StrCat("needs role ", v1::Role_Name(needed))};
    }
    return grpc::Status::OK;
  }
  static grpc::ServerUnaryReactor* Finish(grpc::CallbackServerContext* ctx, grpc::Status status) {
    grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
    reactor->Finish(status);
    return reactor;
  }

  absl::Mutex mu_;
  std::map<std::string, v1::Role> roles_ ABSL_GUARDED_BY(mu_);
  v1::ReportRequest last_report_ ABSL_GUARDED_BY(mu_);
  std::atomic<int> cancels_{0};
};

class DashboardServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.RegisterService(&service_);
    grpc_ = builder.BuildAndStart();
    ASSERT_NE(grpc_, nullptr);
  }
  void TearDown() override {
    if (dashboard_) dashboard_->Stop();
    grpc_->Shutdown();
  }

  DashboardOptions Options(const std::string& listen = "127.0.0.1:0") {
    DashboardOptions options;
    options.listen = listen;
    options.scheduler = grpc_->InProcessChannel(grpc::ChannelArguments());
    options.clock = &clock_;
    return options;
  }
  void Start(DashboardOptions options) {
    auto started = DashboardServer::Start(std::move(options));
    ASSERT_TRUE(started.ok()) << started.status();
    dashboard_ = *std::move(started);
    const std::string& address = dashboard_->address();
    port_ = std::stoi(address.substr(address.rfind(':') + 1));
  }
  std::unique_ptr<httplib::Client> Client() {
    return std::make_unique<httplib::Client>("127.0.0.1", port_);
  }

  // Signs in with `token`; returns the Set-Cookie header ("" when none).
  std::string SignIn(const std::string& token, int expect_status = 303) {
    auto result = Client()->Post("/signin", "token=" + token, "application/x-www-form-urlencoded");
    EXPECT_TRUE(result) << "no answer";
    if (!result) return "";
    EXPECT_EQ(result->status, expect_status) << result->body;
    return result->get_header_value("Set-Cookie");
  }
  static std::string CookieOf(const std::string& set_cookie) {
    return set_cookie.substr(0, set_cookie.find(';'));
  }
  httplib::Result Get(const std::string& path, const std::string& cookie = "") {
    httplib::Headers headers;
    if (!cookie.empty()) headers.emplace("Cookie", cookie);
    return Client()->Get(path.c_str(), headers);
  }
  // The CSRF token a page of the session carries.
  std::string CsrfOf(const std::string& cookie) {
    auto page = Get("/", cookie);
    EXPECT_TRUE(page && page->status == 200);
    const std::string marker = "name=\"ptxb-csrf\" content=\"";
    const size_t at = page ? page->body.find(marker) : std::string::npos;
    return at == std::string::npos ? "" : page->body.substr(at + marker.size(), 64);
  }
  httplib::Result Post(const std::string& path, const std::string& cookie,
                       httplib::Headers headers, const std::string& body = "") {
    headers.emplace("Cookie", cookie);
    return Client()->Post(path.c_str(), headers, body, "application/x-www-form-urlencoded");
  }

  FakeClientService service_;
  std::unique_ptr<grpc::Server> grpc_;
  FakeClock clock_;
  std::unique_ptr<DashboardServer> dashboard_;
  int port_ = 0;
};

TEST_F(DashboardServerTest, WithoutASessionPagesGoToSignInAndTheApiSays401) {
  Start(Options());
  for (const char* page : {"/", "/executors", "/experiments/ex_1", "/trajectories/tr_1",
                           "/experiments/ex_1/report"}) {
    auto result = Get(page);
    ASSERT_TRUE(result) << page;
    EXPECT_EQ(result->status, 303) << page;
    EXPECT_EQ(result->get_header_value("Location"), "/signin") << page;
  }
  auto api = Get("/api/experiments");
  ASSERT_TRUE(api);
  EXPECT_EQ(api->status, 401);
  EXPECT_EQ(nlohmann::json::parse(api->body)["code"], "UNAUTHENTICATED");
  auto forged = Get("/api/experiments", std::string(kSessionCookie) + "=" + std::string(64, 'a'));
  ASSERT_TRUE(forged);
  EXPECT_EQ(forged->status, 401) << "an id nobody was given";

  auto form = Get("/signin");
  ASSERT_TRUE(form);
  EXPECT_EQ(form->status, 200);
  EXPECT_THAT(form->body, HasSubstr("name=\"token\" type=\"password\""));
  EXPECT_EQ(form->get_header_value("Content-Security-Policy"), kPagePolicy);
  EXPECT_EQ(form->get_header_value("X-Frame-Options"), "DENY");
  EXPECT_EQ(form->get_header_value("Cache-Control"), "no-store");
}

TEST_F(DashboardServerTest, SignInSetsAStrictHttpOnlySecureCookieAndOpensThePages) {
  Start(Options());
  const std::string set_cookie = SignIn("read-token");
  EXPECT_THAT(set_cookie, HasSubstr("; HttpOnly"));
  EXPECT_THAT(set_cookie, HasSubstr("; SameSite=Strict"));
  EXPECT_THAT(set_cookie, HasSubstr("; Secure")) << "loopback: browsers keep Secure cookies";
  EXPECT_THAT(set_cookie, HasSubstr("; Path=/"));
  EXPECT_THAT(set_cookie, HasSubstr("; Max-Age=43200"));
  const std::string cookie = CookieOf(set_cookie);
  EXPECT_EQ(cookie.size(), std::string(kSessionCookie).size() + 1 + 64);
  EXPECT_THAT(cookie, Not(HasSubstr("read-token")));

  for (const char* page : {"/", "/executors", "/experiments/ex_1", "/trajectories/tr_1"}) {
    auto result = Get(page, cookie);
    ASSERT_TRUE(result) << page;
    EXPECT_EQ(result->status, 200) << page;
    EXPECT_THAT(result->body, HasSubstr("<script src=\"/static/app.js\" defer></script>"));
    EXPECT_THAT(result->body, HasSubstr("read-token-name · read"));
    EXPECT_THAT(result->body, Not(HasSubstr("read-token\""))) << "the token is never in a page";
    EXPECT_EQ(result->get_header_value("Content-Security-Policy"), kPagePolicy);
  }
  auto signin = Get("/signin", cookie);
  ASSERT_TRUE(signin);
  EXPECT_EQ(signin->status, 303) << "already signed in";
  auto unknown = Get("/experiments/<script>", cookie);
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
}

TEST_F(DashboardServerTest, RefusesUnknownMalformedWorkerAndCrossSiteSignIns) {
  Start(Options());
  EXPECT_EQ(SignIn("no-such-token", 401), "");
  EXPECT_EQ(SignIn("", 400), "");
  EXPECT_EQ(SignIn("two%20words", 400), "");
  EXPECT_EQ(SignIn(std::string(2000, 'x'), 400), "");
  auto worker = Client()->Post("/signin", "token=worker-token", "application/x-www-form-urlencoded");
  ASSERT_TRUE(worker);
  EXPECT_EQ(worker->status, 403);
  EXPECT_THAT(worker->body, HasSubstr("A token of role worker cannot sign in"));
  EXPECT_FALSE(worker->has_header("Set-Cookie"));

  httplib::Headers cross = {{"Sec-Fetch-Site", "cross-site"}};
  auto result = Client()->Post("/signin", cross, "token=read-token",
                               "application/x-www-form-urlencoded");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 403);
  EXPECT_FALSE(result->has_header("Set-Cookie"));
  httplib::Headers other_origin = {{"Origin", "https://evil.example"}};
  result = Client()->Post("/signin", other_origin, "token=read-token",
                          "application/x-www-form-urlencoded");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 403);
}

TEST_F(DashboardServerTest, EscapesTheNameAndServesTheApiAsProtoJson) {
  Start(Options());
  const std::string cookie = CookieOf(SignIn("hostile-token"));
  auto page = Get("/", cookie);
  ASSERT_TRUE(page);
  EXPECT_THAT(page->body, Not(HasSubstr("<img")));
  EXPECT_THAT(page->body, HasSubstr("&lt;img src=x onerror=alert(1)&gt;&amp;&quot;&#39;"));

  auto list = Get("/api/experiments", cookie);
  ASSERT_TRUE(list);
  EXPECT_EQ(list->status, 200);
  EXPECT_EQ(list->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(list->get_header_value("X-Content-Type-Options"), "nosniff");
  auto json = nlohmann::json::parse(list->body);
  EXPECT_EQ(json["experiments"][0]["experiment"]["name"], kHostileName) << "data as it is";
  EXPECT_EQ(json["experiments"][0]["progress"]["total"], "12") << "proto3 JSON: int64 as text";
  EXPECT_EQ(json["experiments"][0]["progress"]["correct"], "0") << "every field present";

  auto page_of = Get("/api/experiments/ex_1/trajectories?offset=400&limit=5000", cookie);
  ASSERT_TRUE(page_of);
  EXPECT_EQ(nlohmann::json::parse(page_of->body)["total"], "1000400") << "the limit is capped";
}

// The trajectory's poll carries its agent records' names; one record's
// content comes on its own when the page opens it.
TEST_F(DashboardServerTest, AnAgentRecordsContentComesAloneWhenAskedFor) {
  Start(Options());
  const std::string cookie = CookieOf(SignIn("read-token"));
  auto whole = Get("/api/trajectories/tr_1", cookie);
  ASSERT_TRUE(whole);
  const auto records = nlohmann::json::parse(whole->body)["trajectory"]["agent"]["records"];
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["content"], "") << "no contents with the poll";
  auto one = Get("/api/trajectories/tr_1/record?name=workspace%2Fkernel.cu", cookie);
  ASSERT_TRUE(one);
  ASSERT_EQ(one->status, 200) << one->body;
  const auto json = nlohmann::json::parse(one->body);
  ASSERT_EQ(json["trajectory"]["agent"]["records"].size(), 1u);
  EXPECT_EQ(json["trajectory"]["agent"]["records"][0]["name"], "workspace/kernel.cu");
  EXPECT_EQ(json["trajectory"]["agent"]["records"][0]["content"],
            "dGV4dCBvZiB3b3Jrc3BhY2Uva2VybmVsLmN1")  // base64, as proto3 JSON writes bytes
      << "text of workspace/kernel.cu";
  EXPECT_EQ(json["trajectory"]["system_prompt"], "") << "only the record";
  auto unnamed = Get("/api/trajectories/tr_1/record", cookie);
  ASSERT_TRUE(unnamed);
  EXPECT_EQ(unnamed->status, 400);
  auto anonymous = Get("/api/trajectories/tr_1/record?name=events.jsonl", "");
  ASSERT_TRUE(anonymous);
  EXPECT_EQ(anonymous->status, 401);
}

TEST_F(DashboardServerTest, ReportPageIsTheReportOfThePlotsGroupingsUnderItsOwnPolicy) {
  Start(Options());
  const std::string cookie = CookieOf(SignIn("read-token"));
  auto report = Get("/experiments/ex_1/report", cookie);
  ASSERT_TRUE(report);
  EXPECT_EQ(report->status, 200);
  EXPECT_EQ(report->body, report::ReportHtml(report::testing::SampleReport()));
  EXPECT_EQ(report->get_header_value("Content-Security-Policy"), kReportPolicy);
  EXPECT_EQ(report->get_header_value("X-Frame-Options"), "SAMEORIGIN");
  const v1::ReportRequest asked = service_.last_report();
  ASSERT_EQ(asked.experiment_ids_size(), 1);
  EXPECT_EQ(asked.experiment_ids(0), "ex_1");
  EXPECT_EQ(static_cast<size_t>(asked.groupings_size()),
            report::HtmlGroupings().size());
}

TEST_F(DashboardServerTest, CancelNeedsTheCsrfTokenAndTheSchedulersYes) {
  Start(Options());
  const std::string reader = CookieOf(SignIn("read-token"));
  const std::string csrf = CsrfOf(reader);
  ASSERT_EQ(csrf.size(), 64u);

  auto no_token = Post("/api/experiments/ex_1/cancel", reader, {});
  ASSERT_TRUE(no_token);
  EXPECT_EQ(no_token->status, 403);
  EXPECT_THAT(no_token->body, HasSubstr("CSRF"));
  auto wrong = Post("/api/experiments/ex_1/cancel", reader, {{"X-CSRF-Token", std::string(64, '0')}});
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 403);
  auto cross = Post("/api/experiments/ex_1/cancel", reader,
                    {{"X-CSRF-Token", csrf}, {"Sec-Fetch-Site", "same-site"}});
  ASSERT_TRUE(cross);
  EXPECT_EQ(cross->status, 403);
  EXPECT_EQ(service_.cancels(), 0) << "none of these reached the scheduler's yes";

  auto denied = Post("/api/experiments/ex_1/cancel", reader,
                     {{"X-CSRF-Token", csrf}, {"Sec-Fetch-Site", "same-origin"}});
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->status, 403);
  EXPECT_EQ(nlohmann::json::parse(denied->body)["code"], "PERMISSION_DENIED");
  EXPECT_THAT(denied->body, HasSubstr("needs role ROLE_SUBMIT")) << "the scheduler's words";
  EXPECT_EQ(service_.cancels(), 0);

  const std::string submitter = CookieOf(SignIn("submit-token"));
  auto other_csrf = Post("/api/experiments/ex_1/cancel", submitter, {{"X-CSRF-Token", csrf}});
  ASSERT_TRUE(other_csrf);
  EXPECT_EQ(other_csrf->status, 403) << "a token belongs to its own session";
  auto done = Post("/api/experiments/ex_1/cancel", submitter, {{"X-CSRF-Token", CsrfOf(submitter)}});
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status, 200) << done->body;
  EXPECT_EQ(nlohmann::json::parse(done->body)["cancelled"], "3");
  EXPECT_EQ(service_.cancels(), 1);
}

TEST_F(DashboardServerTest, SessionsEndAfterTheirTimeOnRevocationAndOnSignOut) {
  Start(Options());
  const std::string cookie = CookieOf(SignIn("read-token"));
  clock_.Advance(absl::Hours(12) - absl::Seconds(1));
  EXPECT_EQ(Get("/", cookie)->status, 200);
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(Get("/", cookie)->status, 303) << "12 h after sign-in";

  const std::string again = CookieOf(SignIn("read-token"));
  EXPECT_NE(again, cookie) << "a new id for each sign-in";
  service_.Revoke("read-token");
  EXPECT_EQ(Get("/api/experiments", again)->status, 401) << "the scheduler refused the token";
  EXPECT_EQ(Get("/", again)->status, 303) << "and the session ended with it";

  const std::string submitter = CookieOf(SignIn("submit-token"));
  const std::string csrf = CsrfOf(submitter);
  EXPECT_EQ(Post("/signout", submitter, {}, "csrf=" + std::string(64, '1'))->status, 403);
  auto out = Post("/signout", submitter, {}, "csrf=" + csrf);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->status, 303);
  EXPECT_EQ(out->get_header_value("Location"), "/signin");
  EXPECT_THAT(out->get_header_value("Set-Cookie"), HasSubstr("Max-Age=0"));
  EXPECT_EQ(Get("/", submitter)->status, 303);
}

TEST_F(DashboardServerTest, ServesItsAssetsWithoutASession) {
  Start(Options());
  auto js = Get("/static/app.js");
  ASSERT_TRUE(js);
  EXPECT_EQ(js->status, 200);
  EXPECT_EQ(js->get_header_value("Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_THAT(js->body, HasSubstr("'use strict';"));
  EXPECT_THAT(js->body, Not(HasSubstr("innerHTML"))) << "data goes in as text only";
  auto css = Get("/static/style.css");
  ASSERT_TRUE(css);
  EXPECT_EQ(css->get_header_value("Content-Type"), "text/css; charset=utf-8");
  EXPECT_EQ(Get("/static/nothing.js")->status, 404);
}

TEST_F(DashboardServerTest, PlainHttpElsewhereThanLoopbackDropsSecureFromTheCookie) {
  Start(Options("0.0.0.0:0"));
  const std::string set_cookie = SignIn("read-token");
  EXPECT_THAT(set_cookie, HasSubstr("; HttpOnly"));
  EXPECT_THAT(set_cookie, Not(HasSubstr("Secure")));
}

TEST_F(DashboardServerTest, RefusesBadOptionsNamingThem) {
  DashboardOptions options = Options("127.0.0.1");
  EXPECT_EQ(DashboardServer::Start(options).status().code(), absl::StatusCode::kInvalidArgument);
  options = Options("[::1:0");
  EXPECT_EQ(DashboardServer::Start(options).status().code(), absl::StatusCode::kInvalidArgument);
  options = Options();
  options.tls_cert_file = "/nonexistent/cert.pem";
  EXPECT_EQ(DashboardServer::Start(options).status().code(), absl::StatusCode::kInvalidArgument)
      << "half a pair";
  options.tls_key_file = "/nonexistent/key.pem";
  auto missing = DashboardServer::Start(options);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(missing.status().message(), HasSubstr("/nonexistent/cert.pem"));
  options = Options();
  options.scheduler = nullptr;
  EXPECT_EQ(DashboardServer::Start(options).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(DashboardServerTest, ServesHttpsWithTheGivenCertificate) {
  const std::string dir = ::testing::TempDir() + "/dashboard_tls_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  auto certs = testing::MakeTestCertificates(dir);
  ASSERT_TRUE(certs.ok()) << certs.status();
  DashboardOptions options = Options();
  options.tls_cert_file = certs->server_cert;
  options.tls_key_file = certs->server_key;
  Start(options);
  EXPECT_EQ(dashboard_->url(), absl::StrCat("https://127.0.0.1:", port_, "/"));

  httplib::SSLClient client("127.0.0.1", port_);
  client.set_ca_cert_path(certs->ca.c_str());
  client.enable_server_certificate_verification(true);
  auto result = client.Post("/signin", "token=submit-token", "application/x-www-form-urlencoded");
  ASSERT_TRUE(result) << httplib::to_string(result.error());
  EXPECT_EQ(result->status, 303);
  EXPECT_THAT(result->get_header_value("Set-Cookie"), HasSubstr("; Secure"));

  auto plain = Get("/signin");
  EXPECT_TRUE(!plain || plain->status != 200) << "no plain HTTP on a TLS port";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ptxbench::dashboard
