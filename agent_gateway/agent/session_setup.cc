// A session's directory, files and sandbox view (session_setup.h).
#include "agent_gateway/agent/session_setup.h"

#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/hash.h"
#include "nlohmann/json.hpp"
#include "sandbox/view.h"

namespace ptxbench::agent_gateway::session_internal {
namespace {

namespace fs = std::filesystem;
namespace v1 = ::ptxbench::v1;
using Json = nlohmann::json;

absl::Status Write(const std::string& path, const std::string& text, mode_t mode = 0644) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out || chmod(path.c_str(), mode) != 0) {
    return absl::InternalError(absl::StrCat("cannot write ", path));
  }
  return absl::OkStatus();
}

// Each CLI reads its standing instructions from a file of its own name.
const char* InstructionFile(const agents::AgentCli& cli) {
  switch (cli.wire) {
    case agents::Wire::kOpenAIResponses: return "AGENTS.md";
    case agents::Wire::kAnthropicMessages: return "CLAUDE.md";
    case agents::Wire::kGeminiGenerate: return "GEMINI.md";
  }
  return "AGENTS.md";
}

std::string Instructions(const v1::AgentSession& s, const SessionFiles& f) {
  const std::string& kernel = f.kernel;
  const std::string& workload = f.workload;
  std::string budgets = absl::StrCat("at most ", s.settings().token_budget(), " tokens");
  if (s.settings().max_evaluations() > 0) {
    absl::StrAppend(&budgets, ", ", s.settings().max_evaluations(), " evaluations");
  }
  const std::string start =
      s.starter_kernel().empty()
          ? ""
          : absl::StrCat("- `", kernel, "` holds the kernel to fix, as it was evaluated; `",
                         f.error_log, "` is the feedback that evaluation gave.\n");
  return absl::StrCat(
      s.system_prompt(), "\n\n## How this session works\n\n",
      "- The task is in TASK.md. Write your kernel to `", kernel, "`.\n", start,
      "- Evaluate it with the `evaluate_kernel` tool",
      s.settings().eval_interface() == "mcp"
          ? ""
          : absl::StrCat(" or the command `ptxbench-eval ", kernel, " ", workload, "`"),
      ": it compiles, checks and times the kernel file as it is and answers with the "
      "feedback. Only evaluated kernels count; the target speedup is ",
      s.target_speedup(), "x.\n",
      !s.profile()
          ? ""
          : absl::StrCat(
                "- The `profile_kernel` tool",
                s.settings().eval_interface() == "mcp"
                    ? ""
                    : absl::StrCat(" (or `ptxbench-eval --profile ", kernel, " ", workload, "`)"),
                " evaluates it the same way and adds a profile by Nsight Compute on the "
                "largest workload: where the time went, per kernel. It counts as an "
                "evaluation.\n"),
      "- One evaluation at a time. Budget: ", budgets,
      ". There is no network and no GPU here; the evaluation runs elsewhere.\n");
}

}  // namespace

std::string KernelFileName(absl::string_view language) {
  if (language == "ptx") return "kernel.ptx";
  if (language == "triton") return "kernel.py";
  return "kernel.cu";
}

std::string SessionDirectory(const SessionOptions& options, const v1::Task& task) {
  return (fs::path(options.sessions_dir) /
          absl::StrCat(task.lease().task_id(), "-", task.agent().session()))
      .string();
}

absl::StatusOr<SessionFiles> MakeSessionFiles(const SessionOptions& options, const v1::Task& task,
                                              uid_t uid) {
  SessionFiles f;
  const v1::AgentSession& s = task.agent();
  f.uid = uid;
  f.dir = SessionDirectory(options, task);
  std::error_code ec;
  RemoveSessionDirectory(f.dir);
  fs::create_directories(f.dir, ec);
  // A file system of its own, of a fixed size: the session cannot fill the
  // gateway's disk (and so fail its neighbours) by writing in its workspace.
  if (geteuid() == 0 &&
      mount("tmpfs", f.dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV,
            sandbox::TmpfsOptions(options.disk_bytes, "mode=0755").c_str()) != 0) {
    return absl::InternalError(absl::StrCat("cannot mount the session's tmpfs at ", f.dir, ": ",
                                            strerror(errno)));
  }
  f.workspace = f.dir + "/workspace";
  f.home = f.dir + "/home";
  f.opt = f.dir + "/opt";
  f.etc = f.dir + "/etc";
  for (const std::string& d : {f.dir, f.workspace, f.home, f.opt, f.etc}) {
    fs::create_directories(d, ec);
    if (ec || chmod(d.c_str(), 0755) != 0) {
      return absl::InternalError(absl::StrCat("cannot make the session's directory ", d, ": ",
                                              ec.message()));
    }
  }
  f.kernel = absl::StrCat(f.workspace, "/", KernelFileName(s.language()));
  f.error_log = f.workspace + "/error.log";
  f.workload = f.opt + "/workload.json";
  f.tool_config = f.opt + "/tool.json";
  f.eval_socket = f.dir + "/eval.sock";
  f.model_socket = f.dir + "/model.sock";
  Json workload = {{"definition", s.definition()},
                   {"language", s.language()},
                   {"target_speedup", s.target_speedup()},
                   {"workloads", s.workload_uuids()}};
  const std::string workload_text = workload.dump(2);
  f.workload_sha256 = Sha256Hex(workload_text);
  for (absl::Status st :
       {Write(f.workload, workload_text),
        Write(f.tool_config, Json{{"socket", f.eval_socket},
                                  {"kernel", f.kernel},
                                  {"workload", f.workload},
                                  {"eval_wait_s", s.settings().eval_wait_timeout_s()},
                                  {"profile", s.profile()}}
                                 .dump()),
        Write(f.workspace + "/TASK.md", s.task_prompt()),
        // starter fixit: the broken kernel and what its evaluation said.
        s.starter_kernel().empty() ? absl::OkStatus() : Write(f.kernel, s.starter_kernel()),
        s.starter_kernel().empty() ? absl::OkStatus() : Write(f.error_log, s.starter_log()),
        Write(f.workspace + "/" + InstructionFile(*agents::FindAgentCli(s.settings().cli())),
              Instructions(s, f)),
        // The session's /etc: who it is and where localhost is, nothing else
        // of the host's.
        Write(f.etc + "/passwd", absl::StrCat("root:x:0:0::/root:/bin/sh\nagent:x:", f.uid, ":",
                                              f.uid, "::", f.home, ":/bin/sh\n")),
        Write(f.etc + "/group", absl::StrCat("root:x:0:\nagent:x:", f.uid, ":\n")),
        Write(f.etc + "/hosts", "127.0.0.1 localhost\n::1 localhost\n"),
        Write(f.etc + "/nsswitch.conf", "passwd: files\ngroup: files\nhosts: files\n"),
        Write(f.etc + "/resolv.conf", ""),
        // Where the host's ld.so.cache is bound (SessionPolicy): programs whose
        // libraries live outside /lib and /usr/lib still load.
        Write(f.etc + "/ld.so.cache", "")}) {
    if (!st.ok()) return st;
  }
  return f;
}

void RemoveSessionDirectory(const std::string& dir) {
  if (geteuid() == 0) umount2(dir.c_str(), MNT_DETACH);  // nothing mounted: EINVAL, fine
  std::error_code ec;
  fs::remove_all(dir, ec);
}

absl::Status HandOver(const SessionFiles& f) {
  if (geteuid() != 0) return absl::OkStatus();  // the sandbox maps the caller's uid
  for (const std::string& own : {f.workspace, f.home}) {
    for (const auto& entry : fs::recursive_directory_iterator(own)) {
      if (lchown(entry.path().c_str(), f.uid, f.uid) != 0) {
        return absl::InternalError(absl::StrCat("cannot hand ", entry.path().string(),
                                                " to the session's uid"));
      }
    }
    if (chown(own.c_str(), f.uid, f.uid) != 0 || chmod(own.c_str(), 0700) != 0) {
      return absl::InternalError(absl::StrCat("cannot hand ", own, " to the session's uid"));
    }
  }
  for (const std::string& socket : {f.eval_socket, f.model_socket}) {
    if (chown(socket.c_str(), f.uid, f.uid) != 0) {
      return absl::InternalError(absl::StrCat("cannot hand ", socket, " to the session's uid"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ModelProxy::Upstream> UpstreamFor(const ModelRegistry& registry,
                                                 const agents::AgentCli& cli,
                                                 const std::string& model) {
  absl::StatusOr<const ModelConfig*> found = registry.Find(model);
  if (!found.ok()) return absl::InvalidArgumentError(found.status().message());
  const ModelConfig& config = **found;
  if (config.provider != agents::WireProvider(cli.wire)) {
    return absl::InvalidArgumentError(absl::StrCat(
        cli.name, " speaks ", agents::WireTitle(cli.wire), ", and model ", model,
        " is served by provider '", config.provider, "' (", config.origin,
        "): run it with a CLI that speaks its API"));
  }
  ModelProxy::Upstream up;
  up.wire = cli.wire;
  up.base_url = config.base_url;
  up.model_id = config.model_id;
  up.price = config.price;
  up.model = model;
  if (!config.api_key_env.empty()) {
    const char* key = std::getenv(config.api_key_env.c_str());
    if (key == nullptr || *key == '\0') {
      return absl::NotFoundError(absl::StrCat("model ", model, " needs its key in $",
                                              config.api_key_env,
                                              ", which is not set where the gateway runs"));
    }
    switch (cli.wire) {
      case agents::Wire::kOpenAIResponses:
        up.key_headers = {absl::StrCat("Authorization: Bearer ", key)};
        break;
      case agents::Wire::kAnthropicMessages:
        up.key_headers = {absl::StrCat("x-api-key: ", key)};
        break;
      case agents::Wire::kGeminiGenerate:
        up.key_headers = {absl::StrCat("x-goog-api-key: ", key)};
        break;
    }
  }
  return up;
}

absl::StatusOr<agents::Launch> LaunchFor(const SessionOptions& options,
                                         const agents::AgentCli& cli,
                                         const v1::AgentSession& session,
                                         const SessionFiles& files) {
  agents::LaunchOptions o;
  o.cli = &cli;
  o.program = (fs::path(options.clis_dir) / cli.executable).string();
  o.tool_binary = options.tool_binary;
  o.workspace = files.workspace;
  o.home = files.home;
  o.tool_config = files.tool_config;
  o.model_port = kRelayPort;
  o.model = session.model();
  o.effort = session.settings().effort();
  o.shell = session.settings().shell();
  o.prompt = absl::StrCat("Read TASK.md and your instructions, then write and evaluate the "
                          "kernel in ", fs::path(files.kernel).filename().string(), ".");
  o.tool_timeout = absl::Seconds(session.settings().eval_wait_timeout_s()) + absl::Minutes(1);
  return agents::PrepareLaunch(o);
}

sandbox::Policy SessionPolicy(const SessionOptions& options, const agents::AgentCli& cli,
                              const SessionFiles& files, const agents::Launch& launch) {
  sandbox::ViewBuilder view;
  // Its /tmp is its own; what is bound under the host's /tmp goes on top.
  view.Add({sandbox::Mount::Kind::kTmpfs, "", "/tmp"});
  for (const char* path : {"/usr", "/bin", "/lib", "/lib64", "/sbin"}) {
    view.AddHostPath(path, sandbox::Mount::Kind::kReadOnly);
  }
  view.Add({sandbox::Mount::Kind::kReadOnly, files.etc, "/etc"});
  // Programs reached through the alternatives system, the loader's cache of
  // library paths, and TLS roots some runtimes load at start; no secret of
  // the host lives in any.
  view.AddHostPath("/etc/alternatives", sandbox::Mount::Kind::kReadOnly);
  view.AddHostPath("/etc/ld.so.cache", sandbox::Mount::Kind::kReadOnly);
  view.AddHostPath("/etc/ssl", sandbox::Mount::Kind::kReadOnly);
  for (const char* device : {"/dev/urandom", "/dev/random", "/dev/zero"}) {
    view.AddHostPath(device, sandbox::Mount::Kind::kDevice);
  }
  view.AddHostPath(options.clis_dir, sandbox::Mount::Kind::kReadOnly);
  view.AddHostPath(options.tool_binary, sandbox::Mount::Kind::kReadOnly);
  view.AddHostPath(files.dir, sandbox::Mount::Kind::kReadWrite);
  // As in the kernels' views: no vendor library's bytes (the toolkit under
  // /usr/local included), so an agent cannot carry cuBLAS into the kernel it
  // evaluates. Each tree is walked once per gateway; docs/AGENTS.md has the
  // cost.
  view.MaskVendorLibraries();
  sandbox::Policy p;
  p.mounts = view.mounts();
  p.loopback = true;
  p.cwd = files.workspace;
  p.env = launch.env;
  p.uid = files.uid;
  p.gid = files.uid;
  p.memory_bytes = options.memory_bytes;
  p.max_processes = options.max_processes;
  p.rlimits = {{RLIMIT_NOFILE, options.open_files}};
  p.cgroup_parent = options.cgroup_parent;
  return p;
}

}  // namespace ptxbench::agent_gateway::session_internal
