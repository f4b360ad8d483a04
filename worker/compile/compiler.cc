#include "worker/compile/compiler.h"

#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "common/file.h"
#include "common/gpu_arch.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/status_macros.h"
#include "process/run.h"
#include "sandbox/command.h"
#include "sandbox/view.h"
#include "worker/compile/cache_entry.h"
#include "worker/compile/library_check.h"
#include "worker/compile/ptx_census.h"
#include "worker/compile/sass_census.h"
#include "worker/compile/ptxas_log.h"
#include "worker/compile/submission.h"
#include "worker/compile/trampoline.h"

namespace ptxbench::worker {
namespace fs = std::filesystem;
using cache_entry::kResultFile;
using cache_entry::LoadCached;
using cache_entry::MakeTempDir;
using cache_entry::Publish;

namespace {

// Gives `dir` and everything written in it to the sandbox's uid: the tools
// read the sources and write beside them whatever umask the worker runs under
// (under a Slurm job's 077 the sources were root's alone).
bool HandOver(const std::string& dir, uid_t uid, gid_t gid) {
  if (lchown(dir.c_str(), uid, gid) != 0) return false;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (lchown(it->path().c_str(), uid, gid) != 0) return false;
  }
  return !ec;
}

// "8 GiB", "512 MiB".
std::string FormatBytes(uint64_t bytes) {
  if (bytes % (uint64_t{1} << 30) == 0) return absl::StrCat(bytes >> 30, " GiB");
  return absl::StrCat(bytes >> 20, " MiB");
}

// Where the build directory and the ABI header are inside the compiler's
// sandbox (the host paths would differ from build to build).
constexpr char kSandboxBuildDir[] = "/ptxbench/build";
constexpr char kSandboxAbiDir[] = "/ptxbench/abi";

// How one tool run ended.
struct StepResult {
  bool ok = false;
  bool timed_out = false;
  bool memory_exceeded = false;
  bool processes_exceeded = false;
  std::string output;
};

}  // namespace

sandbox::Policy CompilerPolicy(const CompilerOptions& o, const std::string& build_dir) {
  sandbox::ViewBuilder view;
  for (const char* path : {"/usr/bin", "/usr/lib", "/usr/lib64", "/usr/libexec", "/usr/include",
                           "/bin", "/lib", "/lib64", "/sbin", "/etc/ld.so.cache",
                           "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives"}) {
    view.AddHostPath(path, sandbox::Mount::Kind::kReadOnly);
  }
  for (const std::string& tool : {o.nvcc, o.ptxas, o.cuobjdump}) {
    if (tool.empty()) continue;
    view.AddHostPath(fs::path(tool).parent_path().parent_path().string(),
                     sandbox::Mount::Kind::kReadOnly);
  }
  // No vendor library's bytes: a source cannot .incbin one into its module
  // to write out and load at run time (docs/SECURITY.md); nvcc and the
  // linker need none of them.
  view.MaskVendorLibraries();
  view.Add({sandbox::Mount::Kind::kReadOnly, o.abi_include_dir, kSandboxAbiDir});
  view.Add({sandbox::Mount::Kind::kReadWrite, build_dir, kSandboxBuildDir});
  sandbox::Policy policy;
  policy.mounts = view.mounts();
  policy.cwd = kSandboxBuildDir;
  policy.env = {absl::StrCat("PATH=", fs::path(o.nvcc).parent_path().string(), ":/usr/bin:/bin"),
                absl::StrCat("HOME=", kSandboxBuildDir), absl::StrCat("TMPDIR=", kSandboxBuildDir),
                "LANG=C"};
  policy.uid = o.sandbox.uid;
  policy.gid = o.sandbox.gid;
  policy.memory_bytes = o.sandbox.memory_bytes;
  policy.max_processes = o.sandbox.max_processes;
  policy.cgroup_parent = o.sandbox.cgroup_parent;
  policy.rlimits = {{RLIMIT_CORE, 0}, {RLIMIT_FSIZE, o.sandbox.file_bytes}, {RLIMIT_NOFILE, 1024}};
  return policy;
}

namespace {

// Runs one tool invocation in `dir` (in the sandbox unless it is off),
// appending "$ command" and its output to `log`. `deadline` is the absolute
// end of the whole build.
absl::StatusOr<StepResult> RunStep(const CompilerOptions& o, const std::vector<std::string>& argv,
                                   const std::string& dir, absl::Time deadline, std::string* log) {
  const absl::Duration left = std::max(deadline - absl::Now(), absl::Milliseconds(1));
  StepResult step;
  if (o.sandbox.enabled) {
    sandbox::CommandOptions command;
    command.policy = CompilerPolicy(o, dir);
    command.argv = argv;
    command.deadline = left;
    PTXB_ASSIGN_OR_RETURN(sandbox::CommandResult r, sandbox::RunCommand(command));
    if (!r.outcome.setup_error.empty()) {
      return absl::InternalError(
          absl::StrCat("the compiler's sandbox could not start ", argv[0], ": ",
                       r.outcome.setup_error));
    }
    step = {r.ok(), r.outcome.timed_out, r.outcome.memory_exceeded,
            r.outcome.processes_exceeded, std::move(r.output)};
  } else {
    process::RunOptions opts;
    opts.argv = argv;
    opts.cwd = dir;
    opts.deadline = left;
    // As in the sandbox: a stop signal sent to the worker's whole tree must
    // not end a build midway (it would read as the kernel's COMPILE_ERROR).
    opts.ignore_stop_signals = true;
    PTXB_ASSIGN_OR_RETURN(process::RunResult r, process::Run(opts));
    step = {r.ok(), r.timed_out, false, false, std::move(r.output)};
  }
  absl::StrAppend(log, "$ ", absl::StrJoin(argv, " "), "\n", step.output);
  if (!step.output.empty() && step.output.back() != '\n') log->push_back('\n');
  return step;
}

// Every header of the ABI folder (ptxbench/kernel_abi.h and the TVM-FFI and
// DLPack compatibility headers), path and text, for the cache key: a change
// to any of them changes every build.
absl::StatusOr<std::string> ReadAbiHeaders(const std::string& root) {
  const fs::path required = fs::path(root) / "ptxbench" / "kernel_abi.h";
  if (!fs::exists(required)) {
    return absl::FailedPreconditionError(absl::StrCat("kernel ABI header missing: ", required.string()));
  }
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it); it.increment(ec)) {
    if (it->is_regular_file(ec)) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  std::string all;
  for (const fs::path& f : files) {
    PTXB_ASSIGN_OR_RETURN(std::string text, ReadFile(f.string()));
    absl::StrAppend(&all, fs::relative(f, root).string(), "\n", text.size(), ":", text);
  }
  return all;
}

bool MentionsUndefinedRun(absl::string_view log) {
  return absl::StrContains(log, "undefined reference to `run(") ||
         absl::StrContains(log, "undefined reference to 'run(");
}

// The commands of one build: the tool's own (nvcc -shared, or ptxas) and,
// for CUDA, one PTX pass per device source (for the census and the hash).
struct BuildCommands {
  std::vector<std::string> build;
  std::vector<std::vector<std::string>> ptx_passes;
};

// A CUDA submission refused before any build: its form (the plan's
// refusal), or a vendor library its source names.
std::optional<CompileResult> RefuseBeforeBuild(const SubmissionPlan& plan) {
  CompileResult r;
  if (!plan.refusal.empty()) {
    r.status = ptxbench::v1::COMPILE_ERROR;
    r.log = absl::StrCat(plan.refusal, "\n");
    return r;
  }
  std::string all_sources;
  for (const workloads::SourceFile& f : plan.files) absl::StrAppend(&all_sources, f.content, "\n");
  if (LibraryUse use = DetectLibraryInSource(all_sources); use.found()) {
    r.status = ptxbench::v1::LIBRARY_FALLBACK;
    r.library = use.library;
    r.log = absl::StrCat("The kernel uses ", use.library, " (", use.evidence,
                         ") instead of hand-written kernels; vendor libraries are not "
                         "allowed.\n");
    return r;
  }
  return std::nullopt;
}

BuildCommands CudaCommands(const CompilerOptions& o, const CompileRequest& request,
                           const SubmissionPlan& plan) {
  const std::string include =
      absl::StrCat("-I", o.sandbox.enabled ? kSandboxAbiDir : o.abi_include_dir);
  const std::string virtual_arch = absl::StrCat("compute_", request.target.substr(3));
  BuildCommands c;
  c.build = {o.nvcc,      "-shared",    "-O3", "-gencode",
             absl::StrCat("arch=", virtual_arch, ",code=", request.target),
             "-lineinfo", "--ptxas-options=-v", "-Xcompiler", "-fPIC,-fvisibility=hidden",
             "-Xlinker",  "--no-undefined",     include};
  // A solution's files include one another from the build folder's root.
  if (request.language == "solution") c.build.push_back("-I.");
  for (const std::string& f : plan.compiled) c.build.push_back(f);
  // The driver API: Hopper kernels build TMA descriptors with
  // cuTensorMapEncodeTiled. nvcc finds the stub libcuda.so; the candidate
  // host resolves it to the node's driver.
  for (const char* arg : {"trampoline.cpp", "-lcuda", "-o", "kernel.so"}) c.build.push_back(arg);
  for (const std::string& cu : plan.device_sources) {
    std::vector<std::string> pass = {o.nvcc, "-ptx", "-O3", "-arch=" + virtual_arch, "-lineinfo",
                                     include};
    if (request.language == "solution") pass.push_back("-I.");
    const std::string out = plan.device_sources.size() == 1 ? "kernel.ptx" : cu + ".ptx";
    for (const std::string& arg : {cu, std::string("-o"), out}) pass.push_back(arg);
    c.ptx_passes.push_back(std::move(pass));
  }
  return c;
}

// Everything that determines the build, each part length-prefixed.
std::string CacheKey(const CompileRequest& request, const BuildCommands& c,
                     const std::string& version, const std::string& abi_headers,
                     const std::string& trampoline, const VendorCodeTable* vendor_code) {
  const std::string build_flags = absl::StrJoin(c.build, "\x1f");
  std::string ptx_flags;
  for (const auto& pass : c.ptx_passes) absl::StrAppend(&ptx_flags, absl::StrJoin(pass, "\x1f"), "\x1e");
  const std::string census = kCensusVersion;
  // A verdict of an older module scan, or one made without this toolkit's
  // vendor code table, is judged again.
  const std::string scan = absl::StrCat(kModuleScanVersion, ";",
                                        vendor_code == nullptr ? "" : vendor_code->identity());
  std::string key_material;
  for (const std::string* part : std::initializer_list<const std::string*>{
           &request.source, &request.language, &build_flags, &ptx_flags, &version, &abi_headers,
           &trampoline, &census, &scan}) {
    absl::StrAppend(&key_material, part->size(), ":", *part, ";");
  }
  return Sha256Hex(key_material);
}

// The submission's files in the build folder.
absl::Status WriteSources(const std::string& dir, const CompileRequest& request,
                          const SubmissionPlan& plan, bool cuda) {
  if (!cuda) return WriteFile(dir + "/kernel.ptx", request.source);
  for (const workloads::SourceFile& f : plan.files) {
    std::error_code ec;
    fs::create_directories((fs::path(dir) / f.path).parent_path(), ec);
    PTXB_RETURN_IF_ERROR(WriteFile(dir + "/" + f.path, f.content));
  }
  return WriteFile(dir + "/trampoline.cpp", plan.trampoline);
}

// The build, then its PTX passes, under one deadline. The result's output
// is the build's own (its link errors and resource counts); its limits are
// any step's. Several device sources give one PTX text for the census.
absl::StatusOr<StepResult> RunBuild(const CompilerOptions& o, const BuildCommands& c,
                                    const SubmissionPlan& plan, const std::string& dir,
                                    std::string* log) {
  const absl::Time deadline = absl::Now() + o.deadline;
  PTXB_ASSIGN_OR_RETURN(StepResult build, RunStep(o, c.build, dir, deadline, log));
  for (const auto& pass : c.ptx_passes) {
    if (!build.ok) break;
    PTXB_ASSIGN_OR_RETURN(StepResult step, RunStep(o, pass, dir, deadline, log));
    build.timed_out |= step.timed_out;
    build.memory_exceeded |= step.memory_exceeded;
    build.processes_exceeded |= step.processes_exceeded;
    build.ok = step.ok;
  }
  if (build.ok && c.ptx_passes.size() > 1) {
    std::string all;
    for (const std::string& cu : plan.device_sources) {
      PTXB_ASSIGN_OR_RETURN(std::string part, ReadFile(dir + "/" + cu + ".ptx"));
      absl::StrAppend(&all, "// ptxbench: ", cu, "\n", part);
    }
    PTXB_RETURN_IF_ERROR(WriteFile(dir + "/kernel.ptx", all));
  }
  return build;
}

// Whether the build was stopped by RLIMIT_FSIZE: a tool says so (gcc
// names the signal, nvcc its number, 25) or left its file at the limit.
bool ReachedFileLimit(const std::string& dir, const std::string& output, uint64_t limit) {
  if (absl::StrContains(output, "File size limit exceeded") ||
      absl::StrContains(output, "died due to signal 25")) {
    return true;
  }
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code size_ec;
    if (it->is_regular_file(size_ec) && it->file_size(size_ec) >= limit && !size_ec) return true;
  }
  return false;
}

// A build whose module or PTX is over CompilerOptions::module_bytes: the
// kernel's COMPILE_ERROR, saying which and how large.
bool OverModuleLimit(const CompilerOptions& o, const std::string& dir, bool cuda,
                     CompileResult* result) {
  std::vector<const char*> names = {cuda ? "kernel.so" : "kernel.cubin"};
  if (cuda) names.push_back("kernel.ptx");  // a PTX submission's is its source
  for (const char* name : names) {
    std::error_code ec;
    const uintmax_t size = fs::file_size(fs::path(dir) / name, ec);
    if (ec || size <= o.module_bytes) continue;
    result->status = ptxbench::v1::COMPILE_ERROR;
    absl::StrAppend(&result->log, "The build's ", name, " holds ", size >> 20,
                    " MiB; a module and its PTX may hold at most ", FormatBytes(o.module_bytes),
                    ", data carried into them included.\n");
    return true;
  }
  return false;
}

// After a build that yields no module: only the submission's own files
// stay (a failed build's leftovers may be as large as the per-file limit).
void KeepOnlySources(const std::string& dir, const SubmissionPlan& plan, bool cuda) {
  std::set<fs::path> keep;
  if (cuda) {
    for (const workloads::SourceFile& f : plan.files) keep.insert(fs::path(dir) / f.path);
    keep.insert(fs::path(dir) / "trampoline.cpp");
  } else {
    keep.insert(fs::path(dir) / "kernel.ptx");
  }
  std::vector<fs::path> drop;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (!it->is_directory(type_ec) && keep.count(it->path()) == 0) drop.push_back(it->path());
  }
  for (const fs::path& p : drop) fs::remove(p, ec);
}

// The verdict of a build that did not succeed, and what the log should tell
// the model.
void JudgeFailedBuild(const CompilerOptions& o, const StepResult& build, const CompileRequest& request,
                      const SubmissionPlan& plan, const std::string& dir, bool cuda,
                      CompileResult* result) {
  if (build.timed_out) {
    // Cached like any verdict: the same source would burn the compile
    // budget again (a submission that takes this long to build is the
    // kernel's problem, whatever the node's load).
    result->status = ptxbench::v1::TIMEOUT;
    absl::StrAppend(&result->log, "Compilation killed: it exceeded the compile deadline of ",
                    absl::FormatDuration(o.deadline), ".\n");
    return;
  }
  result->status = ptxbench::v1::COMPILE_ERROR;
  if (ReachedFileLimit(dir, build.output, o.sandbox.file_bytes)) {
    absl::StrAppend(&result->log, "A file of the build reached the compiler's limit of ",
                    FormatBytes(o.sandbox.file_bytes), " per file.\n");
  } else if (build.memory_exceeded || build.processes_exceeded) {
    // Deterministic for a given source and limit, so cached like any error.
    absl::StrAppend(&result->log,
                    build.memory_exceeded
                        ? absl::StrCat("the compiler exceeded its memory limit (",
                                       FormatBytes(o.sandbox.memory_bytes), ")")
                        : absl::StrCat("the compiler exceeded its process limit (",
                                       o.sandbox.max_processes, " processes)"),
                    "\n");
  } else if (LibraryUse use = DetectLibraryInLinkLog(build.output); use.found()) {
    result->status = ptxbench::v1::LIBRARY_FALLBACK;
    result->library = use.library;
    absl::StrAppend(&result->log, "The kernel uses ", use.library, " (", use.evidence,
                    "); vendor libraries are not allowed.\n");
  } else if (cuda && plan.abi == KernelAbi::kPtxbench && MentionsUndefinedRun(build.output)) {
    absl::StrAppend(&result->log,
                    "The entry point does not match the definition. Expected, at global "
                    "namespace with C++ linkage:\n  ",
                    PtxbenchSignature(*request.definition), "\n");
  } else if (cuda && plan.abi == KernelAbi::kTvmFfi &&
             absl::StrContains(build.output, absl::StrCat("__tvm_ffi_", plan.entry))) {
    absl::StrAppend(&result->log, "The kernel exports no TVM-FFI function named '", plan.entry,
                    "'. Expected, with the definition's inputs then outputs:\n  ",
                    TvmFfiExpectation(*request.definition, plan.entry), "\n");
  }
}

// The SASS census of a built artifact, where the worker has cuobjdump. It
// reads the model's object, so it runs in the compiler's sandbox like the
// build; a listing that fails is no census (the PTX one still stands), noted
// in the log.
void CensusBuiltSass(const CompilerOptions& o, const std::string& dir, CompileResult* result) {
  if (o.cuobjdump.empty() || !fs::exists(o.cuobjdump)) return;
  std::string listing;
  absl::StatusOr<StepResult> step =
      RunStep(o, {o.cuobjdump, "-sass", fs::path(result->artifact_path).filename().string()}, dir,
              absl::Now() + absl::Minutes(1), &listing);
  if (!step.ok() || !step->ok) {
    absl::StrAppend(&result->log, "(no SASS census: cuobjdump could not list the build)\n");
    return;
  }
  ptxbench::v1::SassCensus census = CensusSass(listing);
  if (census.instructions() == 0) {
    // No device code listed (a build always has some): no census, rather
    // than one that says the kernel uses nothing.
    absl::StrAppend(&result->log, "(no SASS census: cuobjdump listed no instructions)\n");
    return;
  }
  result->sass = std::move(census);
  result->sass->set_tool("cuobjdump -sass");
}

// A build that succeeded: its artifact, resources, PTX and SASS census, and
// a vendor library found in the built object.
absl::Status InspectBuilt(const CompilerOptions& o, const std::string& dir, const StepResult& build,
                          bool cuda, CompileResult* result) {
  result->status = ptxbench::v1::COMPILED;
  result->artifact_path = dir + (cuda ? "/kernel.so" : "/kernel.cubin");
  result->ptx_path = dir + "/kernel.ptx";
  result->resources = ParsePtxasVerbose(build.output);
  PTXB_ASSIGN_OR_RETURN(std::string ptx, ReadFile(result->ptx_path));
  // -lineinfo writes the (randomly named) build directory into `.file`
  // directives; without it the same source would give a different PTX, and
  // PTX hash, on every build. The artifact keeps the source's bare name.
  const std::string build_prefix = absl::StrCat(o.sandbox.enabled ? kSandboxBuildDir : dir, "/");
  if (absl::StrContains(ptx, build_prefix)) {
    ptx = absl::StrReplaceAll(ptx, {{build_prefix, ""}});
    PTXB_RETURN_IF_ERROR(WriteFile(result->ptx_path, ptx));
  }
  result->ptx = CensusPtx(ptx);
  CensusBuiltSass(o, dir, result);
  if (!cuda) return absl::OkStatus();
  absl::StatusOr<LibraryUse> use = DetectLibraryInElf(result->artifact_path, o.vendor_code.get());
  if (absl::IsInvalidArgument(use.status()) || absl::IsResourceExhausted(use.status())) {
    // The model's module refused by the scan (gpu_image_scan.h): its fault,
    // cached like any verdict, never a pass.
    result->status = ptxbench::v1::COMPILE_ERROR;
    absl::StrAppend(&result->log, "The built module cannot be checked for vendor code: ",
                    use.status().message(),
                    ". GPU code must be built from the submission's source.\n");
    return absl::OkStatus();
  }
  if (!use.ok()) return use.status();
  if (use->found()) {
    result->status = ptxbench::v1::LIBRARY_FALLBACK;
    result->library = use->library;
    absl::StrAppend(&result->log, "The kernel uses ", use->library, " (", use->evidence,
                    "); vendor libraries are not allowed.\n");
  }
  return absl::OkStatus();
}

}  // namespace

Compiler::Compiler(CompilerOptions options) : options_(std::move(options)) {
  if (!options_.cache_dir.empty()) {
    cache_ = std::make_unique<BuildCache>(options_.cache_dir, options_.cache_bytes,
                                          options_.cache_grace);
  }
}

absl::StatusOr<std::string> Compiler::ToolkitVersion(const std::string& nvcc) {
  if (access(nvcc.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat("CUDA tool not found: ", nvcc));
  }
  process::RunOptions opts;
  opts.argv = {nvcc, "--version"};
  opts.deadline = absl::Seconds(30);
  opts.ignore_stop_signals = true;  // asked at the first build, which may be in a drain
  PTXB_ASSIGN_OR_RETURN(process::RunResult r, process::Run(opts));
  if (!r.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(nvcc, " --version failed: ", r.output.substr(0, 500)));
  }
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(r.output, '\n', absl::SkipWhitespace())) {
    if (absl::StrContains(line, "release") || absl::StartsWith(line, "Build")) {
      lines.emplace_back(absl::StripAsciiWhitespace(line));
    }
  }
  if (lines.empty()) return std::string(absl::StripAsciiWhitespace(r.output));
  return absl::StrJoin(lines, "; ");
}

absl::StatusOr<std::string> Compiler::CachedAbiHeaders() {
  {
    absl::MutexLock lock(&mu_);
    if (!abi_headers_.empty()) return abi_headers_;
  }
  PTXB_ASSIGN_OR_RETURN(std::string headers, ReadAbiHeaders(options_.abi_include_dir));
  absl::MutexLock lock(&mu_);
  abi_headers_ = headers;
  return headers;
}

absl::StatusOr<std::string> Compiler::CachedVersion(const std::string& tool) {
  {
    absl::MutexLock lock(&mu_);
    if (auto it = versions_.find(tool); it != versions_.end()) return it->second;
  }
  PTXB_ASSIGN_OR_RETURN(std::string version, ToolkitVersion(tool));
  absl::MutexLock lock(&mu_);
  versions_[tool] = version;
  return version;
}

absl::StatusOr<CompileResult> Compiler::Compile(const CompileRequest& request) {
  const bool cuda = request.language != "ptx";  // "cuda" or "solution"
  if (cuda && request.definition == nullptr) {
    return absl::InvalidArgumentError("a cuda submission needs its definition");
  }
  if (!IsCompileTarget(request.target)) {
    return absl::InvalidArgumentError(
        absl::StrCat("no GPU architecture to compile for (target '", request.target, "')"));
  }
  SubmissionPlan plan;
  BuildCommands commands;
  std::string abi_headers;
  if (cuda) {
    PTXB_ASSIGN_OR_RETURN(plan, PlanSubmission(request.source, request.language, *request.definition));
    if (std::optional<CompileResult> refused = RefuseBeforeBuild(plan)) return *refused;
  }
  PTXB_ASSIGN_OR_RETURN(std::string version, CachedVersion(cuda ? options_.nvcc : options_.ptxas));
  if (cuda) {
    PTXB_ASSIGN_OR_RETURN(abi_headers, CachedAbiHeaders());
    commands = CudaCommands(options_, request, plan);
  } else {
    commands.build = {options_.ptxas, "-arch=" + request.target, "-v", "kernel.ptx", "-o",
                      "kernel.cubin"};
  }
  CompileResult result;
  result.cache_key = CacheKey(request, commands, version, abi_headers, plan.trampoline,
                              options_.vendor_code.get());

  const bool caching = !options_.cache_dir.empty();
  const fs::path final_dir = fs::path(options_.cache_dir) / result.cache_key;
  if (caching && fs::exists(final_dir / kResultFile)) {
    auto cached = LoadCached(final_dir);
    if (cached.ok()) {
      BuildCache::Touch(final_dir);
      cached->cache_key = result.cache_key;
      return cached;
    }
    // A corrupt entry is rebuilt below and replaced.
  }
  PTXB_ASSIGN_OR_RETURN(
      std::string dir,
      MakeTempDir(caching ? options_.cache_dir
                          : (fs::temp_directory_path() / "ptxbench-compile").string()));
  PTXB_RETURN_IF_ERROR(WriteSources(dir, request, plan, cuda));
  if (options_.sandbox.enabled && geteuid() == 0 &&
      !HandOver(dir, options_.sandbox.uid, options_.sandbox.gid)) {
    return absl::InternalError(absl::StrCat("cannot hand ", dir, " to the compiler's sandbox uid"));
  }
  PTXB_ASSIGN_OR_RETURN(StepResult build, RunBuild(options_, commands, plan, dir, &result.log));
  if (build.ok && !OverModuleLimit(options_, dir, cuda, &result)) {
    PTXB_RETURN_IF_ERROR(InspectBuilt(options_, dir, build, cuda, &result));
  } else if (!build.ok) {
    JudgeFailedBuild(options_, build, request, plan, dir, cuda, &result);
  }
  if (result.status != ptxbench::v1::COMPILED && result.status != ptxbench::v1::LIBRARY_FALLBACK) {
    KeepOnlySources(dir, plan, cuda);
  }
  PTXB_RETURN_IF_ERROR(cache_entry::WriteResult(dir, result));
  if (!caching) return result;
  absl::StatusOr<CompileResult> published = Publish(dir, final_dir, result.cache_key);
  if (published.ok()) {
    const BuildCache::Pruned pruned = cache_->Added(BuildCache::BytesUnder(final_dir));
    if (pruned.entries > 0) {
      LogInfo("build cache pruned", {{"removed", std::to_string(pruned.entries)},
                                     {"removed_mib", std::to_string(pruned.bytes >> 20)},
                                     {"kept_mib", std::to_string(pruned.kept >> 20)},
                                     {"dir", options_.cache_dir}});
    }
  }
  return published;
}

}  // namespace ptxbench::worker
