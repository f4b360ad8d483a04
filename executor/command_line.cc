#include "executor/command_line.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/flags/commandlineflag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/flags.h"

namespace ptxbench::executor {
namespace {

// Handled by absl itself (usage output or flag files); not validated here.
bool IsAbslBuiltin(absl::string_view name) {
  static const auto* names = new absl::flat_hash_set<absl::string_view>{
      "help",   "helpfull",  "helpshort", "helppackage", "version",    "only_check_args",
      "helpon", "helpmatch", "flagfile",  "fromenv",     "tryfromenv", "undefok"};
  return names->contains(name);
}

bool IsFlag(absl::string_view arg) { return arg.size() >= 2 && arg[0] == '-' && arg != "--"; }

}  // namespace

absl::Status CheckCommandLine(int argc, char** argv) {
  DashedArgs dashed(argc, argv);
  const std::vector<std::string> args(dashed.argv(), dashed.argv() + dashed.argc());
  for (size_t i = 1; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    if (arg == "--") {
      if (i + 1 < args.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("unexpected positional argument '", args[i + 1], "'"));
      }
      return absl::OkStatus();
    }
    if (!IsFlag(arg)) {
      return absl::InvalidArgumentError(absl::StrCat("unexpected positional argument '", arg, "'"));
    }
    arg.remove_prefix(absl::StartsWith(arg, "--") ? 2 : 1);
    absl::string_view name = arg;
    absl::string_view value;
    bool has_value = false;
    if (size_t eq = arg.find('='); eq != absl::string_view::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    if (IsAbslBuiltin(name)) continue;

    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr && absl::StartsWith(name, "no") && !has_value) {
      absl::CommandLineFlag* negated = absl::FindCommandLineFlag(name.substr(2));
      if (negated != nullptr && negated->IsOfType<bool>()) continue;
    }
    if (flag == nullptr || flag->IsRetired()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name));
    }
    if (flag->IsOfType<bool>() && !has_value) continue;
    if (!has_value) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrCat("missing value for flag --", name));
      }
      value = args[++i];
    }
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad value '", value, "' for flag --", name, ": ", error));
    }
  }
  return absl::OkStatus();
}

void ParseCommandLineOrExit(int argc, char** argv) {
  absl::Status status = CheckCommandLine(argc, argv);
  if (!status.ok()) {
    std::fprintf(stderr, "%s: %s (see --help)\n", argc > 0 ? argv[0] : "ptxbench",
                 std::string(status.message()).c_str());
    std::exit(kUsageExitCode);
  }
  // absl keeps pointers into argv (e.g. the program name): keep them alive.
  static auto* dashed = new DashedArgs(argc, argv);
  absl::ParseCommandLine(dashed->argc(), dashed->argv());
}

std::string DefaultSchedulerAddress() {
  const char* env = std::getenv("PTXBENCH_SCHEDULER");
  return env != nullptr && *env != '\0' ? env : "127.0.0.1:50051";
}

}  // namespace ptxbench::executor
