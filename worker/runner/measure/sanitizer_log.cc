#include "worker/runner/measure/sanitizer_log.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ptxbench::runner {
namespace {

constexpr absl::string_view kPrefix = "=========";
// Locations a debug report shows source around, at most.
constexpr size_t kMaxLocations = 8;
// Indented lines outside any record kept for a report that would otherwise
// be a bare count.
constexpr size_t kMaxOrphanLines = 40;

// "FILE:LINE" or "FILE:LINE:function" after the last " in " of a frame line
// ("at kernel+0x90 in /b/kernel.cu:12", "at 0x90 in /b/kernel.cu:12:kernel").
bool ParseLocation(absl::string_view frame, SanitizerLocation* out) {
  const size_t in = frame.rfind(" in ");
  if (in == absl::string_view::npos) return false;
  absl::string_view rest = absl::StripAsciiWhitespace(frame.substr(in + 4));
  for (size_t colon = rest.find(':'); colon != absl::string_view::npos;
       colon = rest.find(':', colon + 1)) {
    size_t end = colon + 1;
    while (end < rest.size() && absl::ascii_isdigit(static_cast<unsigned char>(rest[end]))) ++end;
    if (end == colon + 1 || (end < rest.size() && rest[end] != ':')) continue;
    int line = 0;
    if (!absl::SimpleAtoi(rest.substr(colon + 1, end - colon - 1), &line) || line <= 0) continue;
    out->file = std::string(rest.substr(0, colon));
    out->line = line;
    return !out->file.empty();
  }
  return false;
}

// "ERROR SUMMARY: 3 errors" -> 3; -1 when unreadable.
int SummaryCount(absl::string_view text) {
  absl::string_view rest = text;
  if (!absl::ConsumePrefix(&rest, "ERROR SUMMARY:")) return -1;
  rest = absl::StripLeadingAsciiWhitespace(rest);
  const size_t space = rest.find(' ');
  int n = -1;
  if (!absl::SimpleAtoi(rest.substr(0, space), &n)) return -1;
  return n;
}

// Top-level lines that are not reports of the kernel: the sanitizer's own
// notes (PTXBench strips them too).
bool IsNote(absl::string_view text) {
  return absl::StartsWith(text, "Target application returned an error") ||
         absl::StartsWith(text, "Error: process didn't terminate successfully") ||
         absl::StartsWith(text, "LEAK SUMMARY") ||
         absl::StartsWithIgnoreCase(text, "warning") ||
         absl::StartsWith(text, "Sanitizer checks complete");
}

}  // namespace

SanitizerFindings JudgeSanitizerLog(absl::string_view log) {
  SanitizerFindings f;
  bool banner = false, skipping = false;
  int summary = -1, probes = 0;
  std::vector<std::string> kept;
  // Indented lines before any record: a note's continuation, or a record of
  // a shape this reader does not know; shown when errors go undescribed.
  std::vector<std::string> orphans;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    absl::ConsumeSuffix(&line, "\r");
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    absl::string_view body = line;
    if (!absl::ConsumePrefix(&body, kPrefix)) {
      // compute-sanitizer writes nothing else to its log file.
      f.incomplete = "the log holds a line that is not compute-sanitizer's";
      break;
    }
    if (body.find_first_not_of('=') == absl::string_view::npos ||
        absl::StripAsciiWhitespace(body).empty()) {
      skipping = false;  // a bare separator ends a record
      continue;
    }
    if (!absl::StartsWith(body, "  ")) {  // a record's first line: "========= Text"
      skipping = false;
      const absl::string_view text = absl::StripAsciiWhitespace(body);
      if (absl::StartsWith(text, "COMPUTE-SANITIZER")) {
        banner = true;
      } else if (absl::StartsWith(text, "ERROR SUMMARY:")) {
        summary = SummaryCount(text);
      } else if (absl::StartsWith(text, "Program hit") &&
                 absl::StrContains(text, "cuGetProcAddress")) {
        // The driver probing its own entry points: not the kernel's.
        skipping = true;
        ++probes;
      } else if (absl::StartsWith(text, "Internal Sanitizer Error")) {
        f.incomplete = absl::StrCat("compute-sanitizer failed: ", text);
      } else if (!IsNote(text)) {
        ++f.errors;
        kept.push_back(std::string(line));
      }
      continue;
    }
    if (skipping) continue;
    const absl::string_view text = absl::StripAsciiWhitespace(body);
    if (absl::StartsWith(text, "Host Frame") || absl::StartsWith(text, "Saved host backtrace")) {
      continue;
    }
    if (kept.empty()) {
      if (orphans.size() < kMaxOrphanLines) orphans.push_back(std::string(line));
      continue;
    }
    kept.push_back(std::string(line));
    SanitizerLocation at;
    if ((absl::StartsWith(text, "at ") || absl::StartsWith(text, "Device Frame:")) &&
        ParseLocation(text, &at) && f.locations.size() < kMaxLocations &&
        std::none_of(f.locations.begin(), f.locations.end(), [&](const SanitizerLocation& l) {
          return l.file == at.file && l.line == at.line;
        })) {
      f.locations.push_back(at);
    }
  }
  // A print limit of 1 may have spent itself on a probe: the summary counts
  // the probes too, so more errors than probes is a report cut short.
  const int unprinted = summary - probes;
  if (f.errors == 0 && summary >= 0 && unprinted > 0 && f.incomplete.empty()) {
    f.errors = unprinted;
    kept.push_back(absl::StrCat("========= memcheck counted ", unprinted,
                                " error(s) that its print limit left out of the report"));
    // Or records of a shape not read as such: what there was, so the report
    // is never a bare count when the log said more.
    if (!orphans.empty()) {
      kept.push_back("========= lines of the log not read as records:");
      kept.insert(kept.end(), orphans.begin(), orphans.end());
    }
  }
  if (f.incomplete.empty() && f.errors == 0) {
    if (!banner) {
      f.incomplete = "the log has no COMPUTE-SANITIZER banner";
    } else if (summary < 0) {
      f.incomplete = "the log has no ERROR SUMMARY: the sanitizer did not finish";
    }
  }
  // Records read before anything went wrong are the sanitizer's still.
  f.verdict = f.errors > 0              ? SanitizerVerdict::kErrors
              : !f.incomplete.empty() ? SanitizerVerdict::kIncomplete
                                      : SanitizerVerdict::kClean;
  for (const std::string& k : kept) {
    if (f.report.size() + k.size() + 1 > kMaxSanitizerReportBytes) {
      absl::StrAppend(&f.report, "... (report cut at ", kMaxSanitizerReportBytes >> 10, " KiB)\n");
      break;
    }
    absl::StrAppend(&f.report, k, "\n");
  }
  return f;
}

std::string SourceContext(const std::vector<SanitizerLocation>& locations,
                          absl::string_view file_name, absl::string_view source, int context) {
  const std::vector<absl::string_view> lines = absl::StrSplit(source, '\n');
  std::string out;
  for (const SanitizerLocation& at : locations) {
    const size_t slash = at.file.rfind('/');
    const absl::string_view base =
        slash == std::string::npos ? absl::string_view(at.file) : absl::string_view(at.file).substr(slash + 1);
    if (base != file_name || at.line > static_cast<int>(lines.size())) continue;
    absl::StrAppend(&out, file_name, ":", at.line, "\n");
    const int first = std::max(1, at.line - context);
    const int last = std::min(static_cast<int>(lines.size()), at.line + context);
    for (int n = first; n <= last; ++n) {
      absl::StrAppendFormat(&out, "%s %5d | %s\n", n == at.line ? ">" : " ", n, lines[n - 1]);
    }
  }
  return out;
}

}  // namespace ptxbench::runner
