#include "cli/commands/args.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ptxbench::cli {
namespace {

constexpr absl::string_view kUsagePayloadUrl = "type.ptxbench.dev/cli.usage_error";

const FlagSpec* FindFlag(const std::vector<FlagSpec>& flags, absl::string_view name) {
  for (const FlagSpec& f : flags) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

const CommandSpec* FindCommand(const std::vector<CommandSpec>& commands, absl::string_view name) {
  for (const CommandSpec& c : commands) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// Names of the commands in `group` ("prompts" -> {"check", "render"}).
std::vector<std::string> GroupMembers(const std::vector<CommandSpec>& commands,
                                      absl::string_view group) {
  std::vector<std::string> members;
  const std::string prefix = absl::StrCat(group, " ");
  for (const CommandSpec& c : commands) {
    if (absl::StartsWith(c.name, prefix)) members.push_back(c.name.substr(prefix.size()));
  }
  return members;
}

std::string FlagLabel(const FlagSpec& f) {
  std::string label = absl::StrCat("--", f.name);
  if (f.takes_value) absl::StrAppend(&label, " ", f.value_name.empty() ? "VALUE" : f.value_name);
  return label;
}

void AppendFlagTable(std::string* out, const std::vector<FlagSpec>& flags) {
  size_t width = 0;
  for (const FlagSpec& f : flags) width = std::max(width, FlagLabel(f).size());
  for (const FlagSpec& f : flags) {
    std::string label = FlagLabel(f);
    absl::StrAppend(out, "  ", label, std::string(width - label.size() + 2, ' '), f.help,
                    f.repeatable ? " (repeatable)" : "", "\n");
  }
}

}  // namespace

bool ParsedArgs::Has(absl::string_view flag) const {
  return flags.find(std::string(flag)) != flags.end();
}

std::string ParsedArgs::Get(absl::string_view flag, absl::string_view fallback) const {
  auto it = flags.find(std::string(flag));
  if (it == flags.end() || it->second.empty()) return std::string(fallback);
  return it->second.back();
}

std::vector<std::string> ParsedArgs::GetAll(absl::string_view flag) const {
  auto it = flags.find(std::string(flag));
  return it == flags.end() ? std::vector<std::string>{} : it->second;
}

absl::StatusOr<ParsedArgs> ParseArgs(const std::vector<std::string>& args,
                                     const std::vector<CommandSpec>& commands,
                                     const std::vector<FlagSpec>& global_flags) {
  ParsedArgs out;
  std::string group;  // a group word seen, its member not yet
  bool only_positionals = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& tok = args[i];
    if (!only_positionals && tok == "--") {
      only_positionals = true;
      continue;
    }
    if (!only_positionals && (tok == "--help" || tok == "-h")) {
      out.help = true;
      continue;
    }
    if (!only_positionals && tok.size() > 1 && tok[0] == '-') {
      if (!absl::StartsWith(tok, "--")) {
        return UsageError(absl::StrCat("unknown flag '", tok, "' (flags are spelled --name)"));
      }
      const size_t eq = tok.find('=');
      const std::string name = tok.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      const FlagSpec* spec = FindFlag(global_flags, name);
      if (spec == nullptr && out.command != nullptr) spec = FindFlag(out.command->flags, name);
      if (spec == nullptr) {
        if (out.command != nullptr) {
          return UsageError(absl::StrCat("unknown flag --", name, " for 'ptxbench ",
                                         out.command->name, "' (see 'ptxbench ", out.command->name,
                                         " --help')"));
        }
        return UsageError(absl::StrCat("unknown flag --", name, " (see 'ptxbench --help')"));
      }
      std::string value;
      if (spec->takes_value) {
        if (eq != std::string::npos) {
          value = tok.substr(eq + 1);
        } else if (i + 1 < args.size()) {
          value = args[++i];
        } else {
          return UsageError(
              absl::StrCat("flag --", name, " needs a value (", FlagLabel(*spec), ")"));
        }
      } else if (eq != std::string::npos) {
        return UsageError(absl::StrCat("flag --", name, " takes no value (got '", tok, "')"));
      }
      std::vector<std::string>& values = out.flags[name];
      if (!spec->repeatable) values.clear();
      values.push_back(std::move(value));
      continue;
    }
    if (out.command != nullptr) {
      // A command that also names a group ("definitions", "definitions
      // import"): its first word after it may be a member.
      const CommandSpec* member = out.positionals.empty() && out.flags.empty()
                                      ? FindCommand(commands, absl::StrCat(out.command->name, " ", tok))
                                      : nullptr;
      if (member != nullptr) {
        out.command = member;
        continue;
      }
      out.positionals.push_back(tok);
      continue;
    }
    if (!group.empty()) {
      out.command = FindCommand(commands, absl::StrCat(group, " ", tok));
      if (out.command == nullptr) {
        return UsageError(absl::StrCat("unknown command 'ptxbench ", group, " ", tok, "' (try: ",
                                       absl::StrJoin(GroupMembers(commands, group), ", "), ")"));
      }
      continue;
    }
    out.command = FindCommand(commands, tok);
    if (out.command == nullptr) {
      if (GroupMembers(commands, tok).empty()) {
        return UsageError(absl::StrCat("unknown command '", tok, "' (see 'ptxbench --help')"));
      }
      group = tok;
    }
  }

  if (out.help) {
    if (out.command == nullptr) out.help_group = group;
    return out;
  }
  if (out.command == nullptr) {
    if (!group.empty()) {
      return UsageError(absl::StrCat("'ptxbench ", group, "' needs a subcommand: ",
                                     absl::StrJoin(GroupMembers(commands, group), ", ")));
    }
    return UsageError("no command given (see 'ptxbench --help')");
  }
  const CommandSpec& cmd = *out.command;
  const int n = static_cast<int>(out.positionals.size());
  if (n < cmd.min_positionals) {
    return UsageError(absl::StrCat("'ptxbench ", cmd.name, "' needs ", cmd.positional,
                                   " (see 'ptxbench ", cmd.name, " --help')"));
  }
  if (cmd.max_positionals >= 0 && n > cmd.max_positionals) {
    return UsageError(absl::StrCat("unexpected argument '", out.positionals[cmd.max_positionals],
                                   "' for 'ptxbench ", cmd.name, "' (see 'ptxbench ", cmd.name,
                                   " --help')"));
  }
  return out;
}

std::string ProgramUsage(const std::vector<CommandSpec>& commands,
                         const std::vector<FlagSpec>& global_flags) {
  std::string out =
      "usage: ptxbench COMMAND [ARGS] [FLAGS]\n\n"
      "Runs and follows LLM GPU-kernel experiments on a ptxbench scheduler.\n\n"
      "commands:\n";
  size_t width = 0;
  for (const CommandSpec& c : commands) width = std::max(width, c.name.size());
  for (const CommandSpec& c : commands) {
    absl::StrAppend(&out, "  ", c.name, std::string(width - c.name.size() + 2, ' '), c.summary,
                    "\n");
  }
  absl::StrAppend(&out, "\nglobal flags (before or after the command):\n");
  AppendFlagTable(&out, global_flags);
  absl::StrAppend(&out, "\nRun 'ptxbench COMMAND --help' for the flags of a command.\n");
  return out;
}

std::string CommandUsage(const CommandSpec& command, const std::vector<FlagSpec>& global_flags) {
  std::string out = absl::StrCat("usage: ptxbench ", command.name);
  if (!command.positional.empty()) absl::StrAppend(&out, " ", command.positional);
  if (!command.flags.empty()) absl::StrAppend(&out, " [flags]");
  absl::StrAppend(&out, "\n\n", command.summary, "\n");
  if (!command.description.empty()) absl::StrAppend(&out, "\n", command.description, "\n");
  if (!command.flags.empty()) {
    absl::StrAppend(&out, "\nflags:\n");
    AppendFlagTable(&out, command.flags);
  }
  absl::StrAppend(&out, "\nglobal flags:\n");
  AppendFlagTable(&out, global_flags);
  return out;
}

std::string GroupUsage(absl::string_view group, const std::vector<CommandSpec>& commands) {
  std::string out = absl::StrCat("usage: ptxbench ", group, " SUBCOMMAND\n\nsubcommands:\n");
  const std::string prefix = absl::StrCat(group, " ");
  size_t width = 0;
  for (const CommandSpec& c : commands) {
    if (absl::StartsWith(c.name, prefix)) width = std::max(width, c.name.size());
  }
  for (const CommandSpec& c : commands) {
    if (!absl::StartsWith(c.name, prefix)) continue;
    absl::StrAppend(&out, "  ", c.name, std::string(width - c.name.size() + 2, ' '), c.summary,
                    "\n");
  }
  return out;
}

absl::Status UsageError(absl::string_view message) {
  absl::Status status = absl::InvalidArgumentError(message);
  status.SetPayload(kUsagePayloadUrl, absl::Cord("1"));
  return status;
}

bool IsUsageError(const absl::Status& status) {
  return status.GetPayload(kUsagePayloadUrl).has_value();
}

absl::StatusOr<int64_t> ParseIntFlag(absl::string_view flag, absl::string_view value, int64_t min,
                                     int64_t max) {
  int64_t n = 0;
  if (!absl::SimpleAtoi(value, &n) || n < min || n > max) {
    return UsageError(absl::StrCat("--", flag, " must be an integer from ", min, " to ", max,
                                   ", got '", value, "'"));
  }
  return n;
}

absl::StatusOr<double> ParsePositiveSeconds(absl::string_view flag, absl::string_view value) {
  double seconds = 0;
  if (!absl::SimpleAtod(value, &seconds) || !std::isfinite(seconds) || seconds <= 0) {
    return UsageError(
        absl::StrCat("--", flag, " must be a positive number of seconds, got '", value, "'"));
  }
  return seconds;
}

namespace {
constexpr char kExitCodePayload[] = "ptxbench/exit-code";
}  // namespace

absl::Status WithExitCode(absl::Status status, int exit_code) {
  status.SetPayload(kExitCodePayload, absl::Cord(std::to_string(exit_code)));
  return status;
}

std::optional<int> ExitCodeOf(const absl::Status& status) {
  absl::optional<absl::Cord> payload = status.GetPayload(kExitCodePayload);
  int code = 0;
  if (!payload || !absl::SimpleAtoi(std::string(*payload), &code)) return std::nullopt;
  return code;
}

}  // namespace ptxbench::cli
