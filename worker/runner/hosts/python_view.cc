#include "worker/runner/hosts/python_view.h"

#include <sys/stat.h>

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "process/run.h"

namespace ptxbench::runner {
namespace {

// One path per line: the interpreter (as named and resolved), its library
// directories, its headers, its module path and a virtual environment's root. No imports beyond the
// standard library: this runs before anything of torch is needed.
constexpr char kProbe[] =
    "import os, sys, sysconfig\n"
    "paths = [sys.executable, os.path.realpath(sys.executable)]\n"
    "paths += [sysconfig.get_paths()[k] for k in "
    "('stdlib', 'platstdlib', 'purelib', 'platlib', 'include', 'platinclude')]\n"
    "paths += [p for p in sys.path if p]\n"
    // A virtual environment's root holds pyvenv.cfg, which makes it one.
    "if sys.prefix != sys.base_prefix: paths.append(sys.prefix)\n"
    "print('\\n'.join(paths))\n";

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

}  // namespace

std::vector<std::string> CollapseRoots(absl::string_view printed) {
  std::vector<std::string> paths;
  for (absl::string_view line : absl::StrSplit(printed, '\n', absl::SkipWhitespace())) {
    std::string path(absl::StripAsciiWhitespace(line));
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    if (!absl::StartsWith(path, "/") || !Exists(path)) continue;
    paths.push_back(std::move(path));
  }
  // Shortest first: a path is dropped when one already kept holds it.
  std::sort(paths.begin(), paths.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  std::vector<std::string> roots;
  for (const std::string& p : paths) {
    const bool inside = std::any_of(roots.begin(), roots.end(), [&p](const std::string& r) {
      return p == r || r == "/" || absl::StartsWith(p, r + "/");
    });
    if (!inside) roots.push_back(p);
  }
  return roots;
}

absl::StatusOr<std::vector<std::string>> PythonRoots(const std::string& python,
                                                     absl::Duration deadline) {
  process::RunOptions options;
  options.argv = {python, "-I", "-c", kProbe};
  options.deadline = deadline;
  options.max_output_bytes = 256 << 10;
  options.stderr_with_output = false;
  absl::StatusOr<process::RunResult> run = process::Run(options);
  if (!run.ok()) return run.status();
  if (run->timed_out || !run->ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the Python for Triton (", python, ") did not list its paths: ",
        run->timed_out ? "it did not answer in time" : run->output));
  }
  std::vector<std::string> roots = CollapseRoots(run->output);
  if (roots.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the Python for Triton (", python, ") listed no paths"));
  }
  return roots;
}

}  // namespace ptxbench::runner
