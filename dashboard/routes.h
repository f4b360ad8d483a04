#ifndef PTXBENCH_DASHBOARD_ROUTES_H_
#define PTXBENCH_DASHBOARD_ROUTES_H_

// What the dashboard answers on each path (docs/DASHBOARD.md lists them):
// sign-in and sign-out, the pages, the report page shown in a frame, the
// JSON API the pages poll, the cancel action, and the embedded assets.
// Internal to the dashboard; server.cc binds these to httplib's router.
//
// Every path but sign-in and the assets needs a session (the cookie); a page
// without one redirects to /signin, an API call gets 401. Every
// state-changing request must also come from the dashboard's own pages
// (Sec-Fetch-Site / Origin) and carry the session's CSRF token. What a
// session may see or do is the scheduler's decision: each call forwards the
// session's token (scheduler_calls.h).
//
// Thread-safe: httplib calls these from its worker threads.

#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "dashboard/pages.h"
#include "dashboard/scheduler_calls.h"
#include "dashboard/session_store.h"
#include "google/protobuf/message.h"
#include "httplib.h"

namespace ptxbench::dashboard {

class Routes {
 public:
  // `calls` and `sessions` are not owned. `secure_cookie`: see
  // SessionCookie. `scheme` is "https" or "http" (for the Origin check).
  Routes(SchedulerCalls* calls, SessionStore* sessions, absl::Duration session_ttl,
         bool secure_cookie, std::string scheme)
      : calls_(calls),
        sessions_(sessions),
        session_ttl_(session_ttl),
        secure_cookie_(secure_cookie),
        scheme_(std::move(scheme)) {}

  // routes_session.cc
  void SignInForm(const httplib::Request& req, httplib::Response& res);
  void SignIn(const httplib::Request& req, httplib::Response& res);
  void SignOut(const httplib::Request& req, httplib::Response& res);
  void Page(PageKind kind, const httplib::Request& req, httplib::Response& res);
  // Headers every answer carries (the pages' policy unless one was set).
  static void AddSecurityHeaders(const httplib::Request& req, httplib::Response& res);

  // routes_api.cc; the id is the path's first capture.
  void ReportPage(const httplib::Request& req, httplib::Response& res);
  void ListExperiments(const httplib::Request& req, httplib::Response& res);
  void GetExperiment(const httplib::Request& req, httplib::Response& res);
  void ListTrajectories(const httplib::Request& req, httplib::Response& res);
  void GetTrajectory(const httplib::Request& req, httplib::Response& res);
  // One record of a trajectory's agent session with its content (?name=),
  // fetched when the page opens it rather than with every poll.
  void GetAgentRecord(const httplib::Request& req, httplib::Response& res);
  void ListExecutors(const httplib::Request& req, httplib::Response& res);
  void Cancel(const httplib::Request& req, httplib::Response& res);

 private:
  enum class Kind { kPage, kApi };

  // The request's live session. Without one the request is answered (a
  // page redirects to /signin, the API gets 401) and nullopt returned.
  std::optional<Session> SessionOf(const httplib::Request& req, httplib::Response& res,
                                   Kind kind);
  // Whether a state-changing request of `session` came from its own pages
  // with its CSRF token (`token` as sent); if not it is answered 403.
  bool CheckStateChange(const httplib::Request& req, const Session& session,
                        const std::string& token, httplib::Response& res);
  // Answers a failed scheduler call. UNAUTHENTICATED (the token was
  // revoked) also ends the session.
  void Failed(const absl::Status& status, const Session& session, Kind kind,
              httplib::Response& res);
  // The API's one shape: check the session (and for a `state_change` its
  // origin and CSRF token), make the call with its token, answer the reply
  // as JSON or the failure.
  template <typename Request, typename Response>
  void Forward(const httplib::Request& req, httplib::Response& res,
               grpc::Status (SchedulerCalls::Stub::*method)(grpc::ClientContext*, const Request&,
                                                           Response*),
               const Request& request, bool state_change = false,
               const std::function<void(Response&)>& trim = nullptr) {
    std::optional<Session> session = SessionOf(req, res, Kind::kApi);
    if (!session) return;
    if (state_change &&
        !CheckStateChange(req, *session, req.get_header_value("X-CSRF-Token"), res)) {
      return;
    }
    absl::StatusOr<Response> reply = calls_->Call(session->token, method, request);
    if (!reply.ok()) return Failed(reply.status(), *session, Kind::kApi, res);
    if (trim) trim(*reply);
    Json(*reply, res);
  }
  // Answers with `message` as JSON (proto3's JSON mapping, field names as in
  // the .proto, every field present).
  static void Json(const google::protobuf::Message& message, httplib::Response& res);

  SchedulerCalls* const calls_;
  SessionStore* const sessions_;
  const absl::Duration session_ttl_;
  const bool secure_cookie_;
  const std::string scheme_;
};

// Answers `status` with {"error": message, "code": "PERMISSION_DENIED"}.
void JsonError(int http_status, const absl::Status& status, httplib::Response& res);

}  // namespace ptxbench::dashboard

#endif  // PTXBENCH_DASHBOARD_ROUTES_H_
