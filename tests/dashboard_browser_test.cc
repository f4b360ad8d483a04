// The scheduler's live dashboard in headless Chromium, driven over the
// DevTools protocol (testing/cdp.h): a real scheduler serving its dashboard
// over HTTPS with a certificate of a throwaway CA, simulated executors, an
// experiment that runs while the pages are open. Each step is a function,
// named in its failures:
//   1. a page without a session goes to the sign-in page;
//   2. signing in with a read token typed into the form gives a Secure,
//      HttpOnly, SameSite=Strict cookie that scripts cannot read;
//   3. the experiments page shows a new experiment without being reloaded;
//   4. the executors page shows a GPU line and the tasks an executor holds;
//   5. the experiment's page moves on by itself, and its Cancel button, for
//      a read session, shows the scheduler's refusal (403) and cancels
//      nothing;
//   6. once finished, the experiment's page lists its trajectories and shows
//      the report's plots; a trajectory's page shows its kernel verbatim;
//   7. no page logged an error, threw, or broke its Content-Security-Policy;
//   8. signing out ends the session.
// PTXB_DASHBOARD_SCREENSHOT=FILE keeps a picture of the experiment's page
// (docs/images/dashboard.png, scripts/dashboard_screenshot.sh).

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "auth/channel.h"
#include "common/file.h"
#include "common/grpc_status.h"
#include "dashboard/scheduler_calls.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ptxbench/v1/client.grpc.pb.h"
#include "results/report/testing/chromium.h"
#include "testing/cdp.h"
#include "testing/tls.h"
#include "tests/cluster.h"

namespace ptxbench::testing {
namespace {

namespace v1 = ::ptxbench::v1;
using Json = nlohmann::json;
using ::testing::HasSubstr;
using Stub = v1::ClientService::Stub;

constexpr char kExperiment[] = "dashboard-live";

// 2 models x 3 samples = 6 trajectories of up to 3 turns.
std::string Spec(const std::string& name) {
  return absl::StrCat(R"({"name": ")", name, R"(", "definitions": ["gemm_n7168_k5120"],
    "models": ["sim-model-a", "sim-model-b"], "prompt_tags": ["ptxb-basic"],
    "samples": 3, "num_turns": 3, "target_speedup": 1.0})");
}

// The test's state, shared by its steps.
struct Fixture {
  Cluster* cluster;
  // The test's own calls, as the admin (admin_token).
  dashboard::SchedulerCalls* api;
  std::string admin_token;
  CdpBrowser* browser;
  CdpPage* page;
  std::string url;  // "https://127.0.0.1:PORT", no slash
  std::string read_token;
  std::string experiment_id;
};

// A JavaScript string literal of `text`.
std::string Js(const std::string& text) { return Json(text).dump(); }

std::string Text(CdpPage& page, const std::string& selector) {
  absl::StatusOr<Json> text = page.Evaluate(absl::StrCat(
      "(document.querySelector(", Js(selector), ") || {}).textContent || ''"));
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? text->get<std::string>() : "";
}

// Marks the document, so that a later check can tell it was not reloaded.
void Mark(CdpPage& page) { ASSERT_TRUE(page.Evaluate("window.ptxbMark = 'same document'").ok()); }
void ExpectSameDocument(CdpPage& page) {
  absl::StatusOr<Json> mark = page.Evaluate("window.ptxbMark || 'reloaded'");
  ASSERT_TRUE(mark.ok()) << mark.status();
  EXPECT_EQ(*mark, "same document") << "the page was reloaded instead of updated";
}

void CheckSignInRedirect(Fixture& f) {
  SCOPED_TRACE("1. without a session");
  for (const std::string path : {"/", "/executors", "/experiments/x"}) {
    ASSERT_TRUE(f.page->Navigate(f.url + path).ok());
    EXPECT_EQ(f.page->Evaluate("location.pathname").value_or(Json()), "/signin") << path;
  }
  EXPECT_EQ(Text(*f.page, "h1"), "ptxbench");
}

void CheckSignIn(Fixture& f) {
  SCOPED_TRACE("2. sign-in");
  ASSERT_TRUE(f.page->Evaluate("document.getElementById('token').focus()").ok());
  ASSERT_TRUE(f.page->InsertText(f.read_token).ok());
  ASSERT_TRUE(f.page->Evaluate("document.querySelector('form button').click()").ok());
  absl::Status in = f.page->WaitFor(
      "location.pathname === '/' && document.getElementById('experiments')", absl::Seconds(15));
  ASSERT_TRUE(in.ok()) << in;
  EXPECT_THAT(Text(*f.page, ".who"), HasSubstr("· read"));

  absl::StatusOr<Json> cookies = f.browser->Call("Storage.getCookies");
  ASSERT_TRUE(cookies.ok()) << cookies.status();
  int sessions = 0;
  for (const Json& cookie : (*cookies)["cookies"]) {
    if (cookie["name"] != "ptxb_session") continue;
    ++sessions;
    EXPECT_EQ(cookie["httpOnly"], true);
    EXPECT_EQ(cookie["secure"], true);
    EXPECT_EQ(cookie["sameSite"], "Strict");
    EXPECT_EQ(cookie["path"], "/");
    EXPECT_EQ(cookie["value"].get<std::string>().size(), 64u);
    EXPECT_THAT(cookie["value"].get<std::string>(), ::testing::Not(HasSubstr(f.read_token)));
  }
  EXPECT_EQ(sessions, 1) << cookies->dump();
  EXPECT_EQ(f.page->Evaluate("document.cookie").value_or(Json()), "")
      << "HttpOnly: no script of the page sees the session";
  absl::StatusOr<Json> html = f.page->Evaluate("document.documentElement.outerHTML");
  ASSERT_TRUE(html.ok());
  EXPECT_THAT(html->get<std::string>(), ::testing::Not(HasSubstr(f.read_token)));
}

void CheckNewExperimentAppears(Fixture& f) {
  SCOPED_TRACE("3. a new experiment appears");
  ASSERT_TRUE(f.page->WaitFor("document.querySelector('#experiments .empty')", absl::Seconds(10))
                  .ok());
  Mark(*f.page);
  v1::SubmitExperimentRequest submit;
  submit.set_spec_json(Spec(kExperiment));
  auto submitted = f.api->Call(f.admin_token, &Stub::SubmitExperiment, submit);
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  f.experiment_id = submitted->experiment_id();
  absl::Status shown = f.page->WaitFor(
      absl::StrCat("document.querySelector('tr[data-experiment=", Js(f.experiment_id), "]')"),
      absl::Seconds(10));
  ASSERT_TRUE(shown.ok()) << shown;
  ExpectSameDocument(*f.page);
  EXPECT_EQ(Text(*f.page, "#experiments tbody tr td a"), kExperiment);
}

void CheckExecutors(Fixture& f) {
  SCOPED_TRACE("4. executors");
  ASSERT_TRUE(f.page->Navigate(f.url + "/executors").ok());
  // A gateway is between two calls only for a moment while work is queued.
  absl::Status held = f.page->WaitFor(
      "document.querySelector('tr[data-executor] .held a[href^=\"/trajectories/\"]') && "
      "[...document.querySelectorAll('.gpu')].some((g) => g.textContent.includes('Simulated "
      "H200') && g.textContent.includes('healthy'))",
      absl::Seconds(15), "document.getElementById('executors').innerText");
  ASSERT_TRUE(held.ok()) << held;
  EXPECT_THAT(Text(*f.page, ".held"), HasSubstr("LLM"));
}

void CheckExperimentLiveAndCancelRefused(Fixture& f) {
  SCOPED_TRACE("5. the experiment's page, live; Cancel refused");
  ASSERT_TRUE(f.page->Navigate(f.url + "/experiments/" + f.experiment_id).ok());
  ASSERT_TRUE(f.page->WaitFor("document.querySelector('#cards .card')", absl::Seconds(10)).ok());
  EXPECT_EQ(Text(*f.page, "h1"), kExperiment);
  Mark(*f.page);
  const std::string cards = Text(*f.page, "#cards");
  absl::Status moved = f.page->WaitFor(
      absl::StrCat("document.getElementById('cards').textContent !== ", Js(cards)),
      absl::Seconds(20), "document.getElementById('cards').textContent");
  ASSERT_TRUE(moved.ok()) << moved;
  ExpectSameDocument(*f.page);

  // Two clicks: the first only arms the button.
  ASSERT_TRUE(f.page->Evaluate("document.getElementById('cancel').click()").ok());
  EXPECT_EQ(Text(*f.page, "#action-message"), "");
  ASSERT_TRUE(f.page->Evaluate("document.getElementById('cancel').click()").ok());
  absl::Status refused = f.page->WaitFor(
      "document.getElementById('action-message').textContent.includes('HTTP 403')",
      absl::Seconds(10), "document.getElementById('action-message').textContent");
  ASSERT_TRUE(refused.ok()) << refused;
  EXPECT_THAT(Text(*f.page, "#action-message"), HasSubstr("PERMISSION_DENIED"));

  v1::GetExperimentRequest get;
  get.set_experiment_id(f.experiment_id);
  auto experiment = f.api->Call(f.admin_token, &Stub::GetExperiment, get);
  ASSERT_TRUE(experiment.ok()) << experiment.status();
  EXPECT_EQ(experiment->progress().by_state().count("CANCELLED") > 0
                ? experiment->progress().by_state().at("CANCELLED")
                : 0,
            0)
      << "nothing was cancelled";
}

void CheckFinishedPages(Fixture& f) {
  SCOPED_TRACE("6. the finished experiment and a trajectory");
  const Json status = f.cluster->WaitFinished(f.experiment_id, 60);
  ASSERT_TRUE(status.is_object()) << f.cluster->SchedulerLogTail();
  v1::ListTrajectoriesRequest list;
  list.set_experiment_id(f.experiment_id);
  auto trajectories = f.api->Call(f.admin_token, &Stub::ListTrajectories, list);
  ASSERT_TRUE(trajectories.ok()) << trajectories.status();
  ASSERT_EQ(trajectories->trajectories_size(), 6);
  for (const auto& t : trajectories->trajectories()) {
    ASSERT_NE(t.state(), v1::AWAITING_MODEL);
    ASSERT_NE(t.state(), v1::AWAITING_EVAL);
  }

  ASSERT_TRUE(f.page->Navigate(f.url + "/experiments/" + f.experiment_id).ok());
  absl::Status listed = f.page->WaitFor(
      "document.querySelectorAll('#trajectories tr[data-trajectory]').length === 6 && "
      "document.getElementById('report').contentDocument && "
      "document.getElementById('report').contentDocument.querySelector('svg.plot')",
      absl::Seconds(15));
  ASSERT_TRUE(listed.ok()) << listed;
  absl::StatusOr<Json> ids = f.page->Evaluate(
      "[...document.querySelectorAll('#trajectories tr[data-trajectory] td:first-child a')]"
      ".map((a) => a.textContent)");
  ASSERT_TRUE(ids.ok()) << ids.status();
  std::set<std::string> shown, expected;
  for (const Json& id : *ids) shown.insert(id.get<std::string>());
  for (const auto& t : trajectories->trajectories()) expected.insert(t.trajectory_id());
  EXPECT_EQ(shown, expected);
  absl::StatusOr<Json> plots = f.page->Evaluate(
      "(() => { const d = document.getElementById('report').contentDocument;"
      " return {plots: d.querySelectorAll('svg.plot').length,"
      " passAtTurn: [...d.querySelectorAll('figure')].some((f) => f.querySelector('svg.plot')"
      " && f.querySelector('figcaption').textContent.includes('(pass@t)')),"
      " name: d.body.textContent.includes(" +
      Js(kExperiment) + ")}; })()");
  ASSERT_TRUE(plots.ok()) << plots.status();
  EXPECT_GE((*plots)["plots"].get<int>(), 3) << plots->dump();
  EXPECT_EQ((*plots)["passAtTurn"], true) << plots->dump();
  EXPECT_EQ((*plots)["name"], true) << plots->dump();

  if (const char* out = std::getenv("PTXB_DASHBOARD_SCREENSHOT"); out != nullptr && *out) {
    ASSERT_TRUE(f.page->Evaluate("window.scrollTo(0, 0)").ok());
    absl::Status shot = f.page->Screenshot(out);
    EXPECT_TRUE(shot.ok()) << shot;
  }

  // A trajectory with a kernel: its page shows the kernel as the scheduler has it.
  v1::GetTrajectoryRequest get;
  get.set_trajectory_id(trajectories->trajectories(0).trajectory_id());
  auto trajectory = f.api->Call(f.admin_token, &Stub::GetTrajectory, get);
  ASSERT_TRUE(trajectory.ok()) << trajectory.status();
  ASSERT_GT(trajectory->trajectory().turns_size(), 0);
  const v1::Turn& turn = trajectory->trajectory().turns(0);
  ASSERT_FALSE(turn.kernel_source().empty()) << "the simulated model answers with a kernel";
  ASSERT_TRUE(f.page->Navigate(f.url + "/trajectories/" + get.trajectory_id()).ok());
  ASSERT_TRUE(f.page->WaitFor("document.querySelector('section.turn pre.kernel')",
                                absl::Seconds(10))
                  .ok());
  EXPECT_EQ(Text(*f.page, "section.turn[data-turn=\"0\"] pre.kernel"), turn.kernel_source());
  EXPECT_EQ(Text(*f.page, "section.turn[data-turn=\"0\"] pre.feedback"), turn.feedback());
  absl::StatusOr<Json> workloads = f.page->Evaluate(
      "document.querySelectorAll('section.turn[data-turn=\"0\"] table.workloads tbody tr').length");
  ASSERT_TRUE(workloads.ok());
  EXPECT_EQ(*workloads, turn.eval().traces_size());
}

// A read session's cancel is answered 403, which Chromium also logs as a
// failed load: that one is expected; nothing else is.
void CheckQuiet(Fixture& f) {
  SCOPED_TRACE("7. no errors, exceptions or policy violations");
  std::vector<std::string> problems;
  for (const std::string& p : f.page->Problems()) {
    const bool expected_refusal = absl::StrContains(p, "(network)") &&
                                  absl::StrContains(p, "403") &&
                                  absl::StrContains(p, "/cancel");
    if (!expected_refusal) problems.push_back(p);
  }
  EXPECT_THAT(problems, ::testing::IsEmpty()) << absl::StrJoin(problems, "\n");
}

void CheckSignOut(Fixture& f) {
  SCOPED_TRACE("8. sign-out");
  ASSERT_TRUE(f.page->Evaluate("document.querySelector('header form button').click()").ok());
  absl::Status out =
      f.page->WaitFor("location.pathname === '/signin' && document.getElementById('token')",
                        absl::Seconds(10));
  ASSERT_TRUE(out.ok()) << out;
  ASSERT_TRUE(f.page->Navigate(f.url + "/executors").ok());
  EXPECT_EQ(f.page->Evaluate("location.pathname").value_or(Json()), "/signin");
}

TEST(DashboardBrowserTest, SignInFollowAnExperimentAndBeRefusedItsCancel) {
  report::testing::ChromiumOptions chromium;
  chromium.binary = report::testing::FindChromium();
  if (chromium.binary.empty()) {
    GTEST_SKIP() << "no chromium: install the Debian package chromium (scripts/setup.sh) or "
                    "set PTXB_CHROMIUM";
  }
  Cluster c("dashboard_browser");
  auto certs = MakeTestCertificates(c.dir() + "/tls");
  ASSERT_TRUE(certs.ok()) << certs.status();
  ASSERT_TRUE(c.StartScheduler({"--http-listen", "127.0.0.1:0", "--tls-cert", certs->server_cert,
                                "--tls-key", certs->server_key}))
      << c.SchedulerLogTail();
  c.SetCliFlags({"--tls-ca", certs->ca});
  absl::StatusOr<std::string> address = ReadFile(c.dir() + "/dashboard.addr");
  ASSERT_TRUE(address.ok()) << address.status() << c.SchedulerLogTail();
  absl::StatusOr<std::string> admin = ReadFile(c.dir() + "/admin.token");
  ASSERT_TRUE(admin.ok()) << admin.status();
  const std::string admin_token(absl::StripAsciiWhitespace(*admin));
  auth::ChannelSecurity tls;
  tls.ca_pem = ReadFile(certs->ca).value_or("");
  dashboard::SchedulerCalls api(auth::NewChannel(c.address(), tls), absl::Seconds(30));
  v1::CreateTokenRequest create;
  create.set_role(v1::ROLE_READ);
  create.set_name("dashboard-viewer");
  auto read = api.Call(admin_token, &Stub::CreateToken, create);
  ASSERT_TRUE(read.ok()) << read.status();

  chromium.work_dir = c.dir() + "/chromium";
  chromium.window_width = 1280;
  chromium.window_height = 1500;
  std::filesystem::create_directories(chromium.work_dir);
  // The throwaway CA is not the browser's: its certificate is taken as it
  // is, while the connection, and so the Secure cookie, is still TLS.
  auto browser = CdpBrowser::Launch({chromium, {"--ignore-certificate-errors"}});
  ASSERT_TRUE(browser.ok()) << browser.status();
  auto page = CdpPage::Open(browser->get());
  ASSERT_TRUE(page.ok()) << page.status();

  Fixture f{&c, &api, admin_token, browser->get(), &*page,
          "https://" + std::string(absl::StripAsciiWhitespace(*address)), read->token(), ""};
  CheckSignInRedirect(f);
  CheckSignIn(f);
  ASSERT_FALSE(HasFatalFailure());
  CheckNewExperimentAppears(f);
  ASSERT_FALSE(HasFatalFailure());
  // The worker is quick; the gateway slow enough that its calls are seen.
  c.AddWorker({"--tls-ca", certs->ca, "--latency-ms", "200", "--seed", "1"});
  c.AddGateway({"--tls-ca", certs->ca, "--latency-ms", "1500", "--slots", "2", "--seed", "7"});
  CheckExecutors(f);
  CheckExperimentLiveAndCancelRefused(f);
  CheckFinishedPages(f);
  CheckQuiet(f);
  CheckSignOut(f);
}

}  // namespace
}  // namespace ptxbench::testing
