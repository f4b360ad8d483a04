// Routes: the JSON API the pages poll, the cancel action and the report page.
// Each is one scheduler call with the session's token; the answer goes out
// as proto3 JSON, so the page reads the same fields as `--output json`.
#include <algorithm>
#include <string>

#include "absl/strings/numbers.h"
#include "common/proto_json.h"
#include "dashboard/routes.h"
#include "dashboard/web_security.h"
#include "results/report/html.h"

namespace ptxbench::dashboard {

namespace v1 = ::ptxbench::v1;
using Stub = SchedulerCalls::Stub;

namespace {

// A page of the trajectories table; the page asks for the next one.
constexpr int kDefaultTrajectories = 200;
constexpr int kMaxTrajectories = 1000;

int IntParam(const httplib::Request& req, const char* name, int fallback, int max) {
  int value = 0;
  if (!req.has_param(name) || !absl::SimpleAtoi(req.get_param_value(name), &value) || value < 0) {
    return fallback;
  }
  return std::min(value, max);
}

}  // namespace

void Routes::Json(const google::protobuf::Message& message, httplib::Response& res) {
  absl::StatusOr<std::string> out = ProtoJson(message);
  if (!out.ok()) {
    return JsonError(500, absl::InternalError("cannot write the answer as JSON"), res);
  }
  res.set_content(*out, "application/json");
}

void Routes::ListExperiments(const httplib::Request& req, httplib::Response& res) {
  Forward(req, res, &Stub::ListExperiments, v1::ListExperimentsRequest());
}

void Routes::GetExperiment(const httplib::Request& req, httplib::Response& res) {
  v1::GetExperimentRequest request;
  request.set_experiment_id(req.matches[1]);
  Forward(req, res, &Stub::GetExperiment, request);
}

void Routes::ListTrajectories(const httplib::Request& req, httplib::Response& res) {
  v1::ListTrajectoriesRequest request;
  request.set_experiment_id(req.matches[1]);
  request.set_offset(IntParam(req, "offset", 0, 1 << 30));
  request.set_limit(IntParam(req, "limit", kDefaultTrajectories, kMaxTrajectories));
  Forward(req, res, &Stub::ListTrajectories, request);
}

void Routes::GetTrajectory(const httplib::Request& req, httplib::Response& res) {
  v1::GetTrajectoryRequest request;
  request.set_trajectory_id(req.matches[1]);
  Forward(req, res, &Stub::GetTrajectory, request);
}

void Routes::GetAgentRecord(const httplib::Request& req, httplib::Response& res) {
  v1::GetTrajectoryRequest request;
  request.set_trajectory_id(req.matches[1]);
  const std::string name = req.get_param_value("name");
  if (name.empty()) {
    return JsonError(400, absl::InvalidArgumentError("name the record: ?name=..."), res);
  }
  request.set_agent_record(name);
  Forward(req, res, &Stub::GetTrajectory, request, /*state_change=*/false,
          std::function<void(v1::GetTrajectoryResponse&)>([&](v1::GetTrajectoryResponse& r) {
            // Only the record: the page has the rest.
            v1::AgentRecord record;
            for (const v1::AgentRecord& each : r.trajectory().agent().records()) {
              if (each.name() == name) record = each;
            }
            r.Clear();
            *r.mutable_trajectory()->mutable_agent()->add_records() = std::move(record);
          }));
}

void Routes::ListExecutors(const httplib::Request& req, httplib::Response& res) {
  Forward(req, res, &Stub::ListExecutors, v1::ListExecutorsRequest());
}

void Routes::Cancel(const httplib::Request& req, httplib::Response& res) {
  v1::CancelRequest request;
  request.set_experiment_id(req.matches[1]);
  // Whether this session may cancel is the scheduler's answer (a read token
  // gets PERMISSION_DENIED, answered 403).
  Forward(req, res, &Stub::Cancel, request, /*state_change=*/true);
}

void Routes::ReportPage(const httplib::Request& req, httplib::Response& res) {
  std::optional<Session> session = SessionOf(req, res, Kind::kPage);
  if (!session) return;
  // The same request and page as `ptxbench report EXP --html FILE`.
  v1::ReportRequest request;
  request.add_experiment_ids(req.matches[1]);
  for (const std::vector<std::string>& grouping : report::HtmlGroupings()) {
    v1::Grouping* g = request.add_groupings();
    for (const std::string& dimension : grouping) g->add_by(dimension);
  }
  auto reply = calls_->Call(session->token, &Stub::GetReport, request);
  if (!reply.ok()) return Failed(reply.status(), *session, Kind::kPage, res);
  res.set_header("Content-Security-Policy", kReportPolicy);
  res.set_header("X-Frame-Options", "SAMEORIGIN");
  res.set_content(report::ReportHtml(*reply), "text/html; charset=utf-8");
}

}  // namespace ptxbench::dashboard
