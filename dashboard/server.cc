#include "dashboard/server.h"

#include <functional>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "auth/server.h"
#include "common/log.h"
#include "common/status_macros.h"
#include "daemon/http_thread.h"
#include "dashboard/assets.h"
#include "dashboard/routes.h"
#include "httplib.h"

namespace ptxbench::dashboard {
namespace {

// Experiment and trajectory ids and names ([A-Za-z0-9._-]); anything else
// in a path is not found.
constexpr char kId[] = "([A-Za-z0-9._-]{1,200})";
// Sign-in forms and the cancel action are small; nothing else is posted.
constexpr size_t kMaxBody = 64 << 10;

struct HostPort {
  std::string host;  // without brackets
  int port = 0;
};

absl::StatusOr<HostPort> ParseListen(absl::string_view listen) {
  const size_t colon = listen.rfind(':');
  HostPort out;
  if (colon == absl::string_view::npos || colon == 0 ||
      !absl::SimpleAtoi(listen.substr(colon + 1), &out.port) || out.port < 0 ||
      out.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("dashboard address '", listen, "' is not HOST:PORT"));
  }
  absl::string_view host = listen.substr(0, colon);
  if (absl::ConsumePrefix(&host, "[") && !absl::ConsumeSuffix(&host, "]")) {
    return absl::InvalidArgumentError(absl::StrCat("dashboard address '", listen,
                                                   "': an IPv6 host is written [ADDR]"));
  }
  out.host = std::string(host);
  return out;
}


}  // namespace

struct DashboardServer::Impl {
  Impl(const DashboardOptions& options, bool tls, bool secure_cookie)
      : calls(options.scheduler, options.call_deadline),
        sessions(options.clock, {options.session_ttl}),
        routes(&calls, &sessions, options.session_ttl, secure_cookie, tls ? "https" : "http") {}

  void Route();

  SchedulerCalls calls;
  SessionStore sessions;
  Routes routes;
  std::unique_ptr<httplib::Server> server;
  std::optional<daemon::HttpThread> thread;  // after the server: stopped first
  std::string url;
  std::string address;
};

void DashboardServer::Impl::Route() {
  using Handler = void (Routes::*)(const httplib::Request&, httplib::Response&);
  auto bind = [this](Handler handler) {
    return [this, handler](const httplib::Request& req, httplib::Response& res) {
      (routes.*handler)(req, res);
    };
  };
  auto page = [this](PageKind kind) {
    return [this, kind](const httplib::Request& req, httplib::Response& res) {
      routes.Page(kind, req, res);
    };
  };
  httplib::Server& s = *server;
  s.Get("/signin", bind(&Routes::SignInForm));
  s.Post("/signin", bind(&Routes::SignIn));
  s.Post("/signout", bind(&Routes::SignOut));
  s.Get("/", page(PageKind::kExperiments));
  s.Get(absl::StrCat("/experiments/", kId), page(PageKind::kExperiment));
  s.Get(absl::StrCat("/experiments/", kId, "/report"), bind(&Routes::ReportPage));
  s.Get(absl::StrCat("/trajectories/", kId), page(PageKind::kTrajectory));
  s.Get("/executors", page(PageKind::kExecutors));
  s.Get("/api/experiments", bind(&Routes::ListExperiments));
  s.Get(absl::StrCat("/api/experiments/", kId), bind(&Routes::GetExperiment));
  s.Get(absl::StrCat("/api/experiments/", kId, "/trajectories"), bind(&Routes::ListTrajectories));
  s.Post(absl::StrCat("/api/experiments/", kId, "/cancel"), bind(&Routes::Cancel));
  s.Get(absl::StrCat("/api/trajectories/", kId), bind(&Routes::GetTrajectory));
  s.Get(absl::StrCat("/api/trajectories/", kId, "/record"), bind(&Routes::GetAgentRecord));
  s.Get("/api/executors", bind(&Routes::ListExecutors));
  s.Get("/static/.*", [](const httplib::Request& req, httplib::Response& res) {
    const Asset* asset = FindAsset(req.path);
    if (asset == nullptr) {
      res.status = 404;
      return;
    }
    res.set_content(std::string(asset->body), std::string(asset->content_type));
  });
  s.set_post_routing_handler(&Routes::AddSecurityHeaders);
  s.set_payload_max_length(kMaxBody);
}

absl::StatusOr<std::unique_ptr<DashboardServer>> DashboardServer::Start(DashboardOptions options) {
  PTXB_ASSIGN_OR_RETURN(HostPort listen, ParseListen(options.listen));
  if (options.scheduler == nullptr) {
    return absl::InvalidArgumentError("dashboard: no channel to the scheduler");
  }
  const bool tls = !options.tls_cert_file.empty() || !options.tls_key_file.empty();
  if (tls && (options.tls_cert_file.empty() || options.tls_key_file.empty())) {
    return absl::InvalidArgumentError("dashboard: TLS needs both a certificate and a key file");
  }
  // A browser sends a Secure cookie back over HTTPS, and over plain HTTP
  // only to a loopback address; elsewhere plain HTTP (--insecure) would
  // lose the session at once.
  const bool secure_cookie = tls || auth::IsLoopbackAddress(options.listen);
  auto impl = std::make_unique<Impl>(options, tls, secure_cookie);
  if (tls) {
    auto server = std::make_unique<httplib::SSLServer>(options.tls_cert_file.c_str(),
                                                       options.tls_key_file.c_str());
    if (!server->is_valid()) {
      return absl::FailedPreconditionError(
          absl::StrCat("dashboard: cannot load the TLS certificate ", options.tls_cert_file,
                       " with its key ", options.tls_key_file));
    }
    impl->server = std::move(server);
  } else {
    impl->server = std::make_unique<httplib::Server>();
  }
  impl->Route();
  int port = listen.port;
  const bool bound = port == 0 ? (port = impl->server->bind_to_any_port(listen.host)) > 0
                               : impl->server->bind_to_port(listen.host, port);
  if (!bound) {
    return absl::UnavailableError(
        absl::StrCat("dashboard: cannot listen on ", options.listen, " (address in use or invalid)"));
  }
  const std::string host =
      listen.host.find(':') != std::string::npos ? absl::StrCat("[", listen.host, "]") : listen.host;
  impl->address = absl::StrCat(host, ":", port);
  impl->url = absl::StrCat(tls ? "https" : "http", "://", impl->address, "/");
  if (!secure_cookie) {
    LogWarning("dashboard serves plain HTTP on a non-loopback address: its session cookie "
               "and tokens cross the network in the clear",
               {{"address", impl->address}});
  }
  impl->thread.emplace(*impl->server);
  return std::unique_ptr<DashboardServer>(new DashboardServer(std::move(impl)));
}

DashboardServer::DashboardServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

DashboardServer::~DashboardServer() { Stop(); }

const std::string& DashboardServer::url() const { return impl_->url; }
const std::string& DashboardServer::address() const { return impl_->address; }

void DashboardServer::Stop() {
  if (impl_->thread) impl_->thread->Stop();
}

}  // namespace ptxbench::dashboard
