#ifndef PTXBENCH_COMMON_LOG_H_
#define PTXBENCH_COMMON_LOG_H_

// Structured log lines in logfmt, one event per line on stderr:
//   ts=2026-11-30T02:30:00.123Z level=info component=scheduler msg="listening" addr=...
// Daemons log through this so their output can be grepped and parsed alike.

#include <initializer_list>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace ptxbench {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

using LogField = std::pair<absl::string_view, std::string>;

// Sets the component name written on every line and the minimum level.
void InitLogging(absl::string_view component, LogLevel min_level = LogLevel::kInfo);

// `fields` is a braced list at most call sites, a vector where they are built
// at run time.
void Log(LogLevel level, absl::string_view msg, absl::Span<const LogField> fields = {});

inline void LogInfo(absl::string_view msg, std::initializer_list<LogField> f = {}) {
  Log(LogLevel::kInfo, msg, f);
}
inline void LogWarning(absl::string_view msg, std::initializer_list<LogField> f = {}) {
  Log(LogLevel::kWarning, msg, f);
}
inline void LogError(absl::string_view msg, std::initializer_list<LogField> f = {}) {
  Log(LogLevel::kError, msg, f);
}

}  // namespace ptxbench

#endif  // PTXBENCH_COMMON_LOG_H_
