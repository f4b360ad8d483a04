#include "common/log.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace ptxbench {
namespace {

// Guards the settings InitLogging writes and every Log call reads, and keeps
// lines whole when threads log at once.
absl::Mutex log_mu(absl::kConstInit);
std::string* const component_name ABSL_PT_GUARDED_BY(log_mu) = new std::string("ptxbench");
LogLevel min_log_level ABSL_GUARDED_BY(log_mu) = LogLevel::kInfo;

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarning: return "warn";
    case LogLevel::kError: return "error";
  }
  return "info";
}

// Quotes a value when logfmt needs it (spaces, quotes, '=' or empty).
void AppendValue(std::string* out, absl::string_view v) {
  bool quote = v.empty() || v.find_first_of(" \"=\t\n") != absl::string_view::npos;
  if (!quote) {
    out->append(v.data(), v.size());
    return;
  }
  out->push_back('"');
  for (char c : v) {
    if (c == '"' || c == '\\') out->push_back('\\');
    if (c == '\n') {
      out->append("\\n");
      continue;
    }
    out->push_back(c);
  }
  out->push_back('"');
}

}  // namespace

void InitLogging(absl::string_view component, LogLevel min_level) {
  absl::MutexLock lock(&log_mu);
  *component_name = std::string(component);
  min_log_level = min_level;
}

void Log(LogLevel level, absl::string_view msg, absl::Span<const LogField> fields) {
  const absl::Time now = absl::Now();
  // One critical section: the level and the component name are read under the
  // lock InitLogging writes them under, and the line goes out whole.
  absl::MutexLock lock(&log_mu);
  if (level < min_log_level) return;
  std::string line =
      absl::StrCat("ts=", absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", now, absl::UTCTimeZone()),
                   " level=", LevelName(level), " component=", *component_name, " msg=");
  AppendValue(&line, msg);
  for (const auto& [key, value] : fields) {
    absl::StrAppend(&line, " ", key, "=");
    AppendValue(&line, value);
  }
  line.push_back('\n');
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace ptxbench
