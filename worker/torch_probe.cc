#include "worker/torch_probe.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "process/run.h"

namespace ptxbench::worker {
namespace {

// Prints the version only when torch imports and sees a CUDA device; the
// assertion's text says which of the two failed.
constexpr char kProbe[] =
    "import torch; assert torch.cuda.is_available(), 'torch ' + torch.__version__ + ' sees no "
    "CUDA device'; print(torch.__version__)";
// The same for Triton: it imports beside torch (and triton.language, what a
// kernel.py imports), and torch sees the GPU. Nothing is compiled: Triton's
// driver would build its launcher utilities into the worker's own cache.
constexpr char kTritonProbe[] =
    "import torch, triton, triton.language; assert torch.cuda.is_available(), 'torch ' + "
    "torch.__version__ + ' sees no CUDA device'; print(triton.__version__)";

// `name` in a folder of $PATH, or "".
std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  for (absl::string_view dir : absl::StrSplit(path, ':', absl::SkipEmpty())) {
    const std::filesystem::path candidate = std::filesystem::path(std::string(dir)) / name;
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec) && access(candidate.c_str(), X_OK) == 0) {
      return candidate.string();
    }
  }
  return "";
}

// The last non-empty line of `output`: the version, or the exception that
// ended the probe (after any warnings torch printed first).
std::string LastLine(const std::string& output) {
  std::string last;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty()) last = std::string(line);
  }
  return last;
}

// Runs `script` in `python` within `deadline`: the version it prints, or
// why not (`what` names the import, for a timeout).
void RunProbe(const std::string& python, const char* script, absl::string_view what,
              absl::Duration deadline, std::string& version, std::string& why_not) {
  process::RunOptions options;
  options.argv = {python, "-c", script};
  options.deadline = deadline;
  options.max_output_bytes = 64 << 10;
  absl::StatusOr<process::RunResult> run = process::Run(options);
  if (!run.ok()) {
    why_not = std::string(run.status().message());
  } else if (run->timed_out) {
    why_not = absl::StrCat("\"", what, "\" did not finish within ", absl::FormatDuration(deadline));
  } else if (!run->ok()) {
    const std::string last = LastLine(run->output);
    why_not = absl::StrCat(run->exited ? absl::StrCat("exit code ", run->exit_code)
                                       : absl::StrCat("signal ", run->term_signal),
                           last.empty() ? "" : ": ", last);
  } else if (version = LastLine(run->output); version.empty()) {
    why_not = absl::StrCat("it printed no ", absl::StripPrefix(what, "import "), " version");
  }
}

}  // namespace

std::string PythonModuleProbe::Capability() const {
  return ok() ? absl::StrCat(module, " ", version, " at ", python) : "";
}

TritonProbe ProbeTriton(const TorchProbe& torch, absl::Duration deadline) {
  TritonProbe probe;
  probe.module = "triton";
  if (!torch.ok()) {
    probe.why_not = absl::StrCat("no PyTorch to run it beside (", torch.why_not, ")");
    return probe;
  }
  probe.python = torch.python;
  RunProbe(probe.python, kTritonProbe, "import triton", deadline, probe.version, probe.why_not);
  return probe;
}

TorchProbe ProbeTorch(const std::string& torch_python, absl::Duration deadline) {
  TorchProbe probe;
  probe.module = "torch";
  if (torch_python == "none") {
    probe.why_not = "--torch-python none";
    return probe;
  }
  probe.python = torch_python == "auto" ? FindOnPath("python3") : torch_python;
  if (probe.python.empty()) {
    probe.why_not = "no python3 on PATH (--torch-python auto); pass --torch-python PATH";
    return probe;
  }
  RunProbe(probe.python, kProbe, "import torch", deadline, probe.version, probe.why_not);
  return probe;
}

}  // namespace ptxbench::worker
