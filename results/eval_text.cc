#include "results/eval_text.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ptxbench {
namespace {

using ::ptxbench::v1::KernelProfile;
using ::ptxbench::v1::KernelProfileRun;

constexpr char kSimulatedProfile[] = "[SIMULATED PROFILE — not a measurement]";
// Lines of a failed profile's error shown; the rest is in `show`.
constexpr int kErrorLines = 6;
constexpr size_t kMaxErrorLine = 300;
constexpr size_t kMaxName = 200;
// The worker writes a census's gap; it may quote what the candidate did.
constexpr size_t kCensusGapBytes = 300;

bool Measured(double v) { return v >= 0; }

std::string Percent(double v) { return absl::StrFormat("%.1f%%", v); }

// "812.3 us" / "1.25 ms": whichever reads better.
std::string Duration(double us) {
  return us >= 1000 ? absl::StrFormat("%.3f ms", us / 1000) : absl::StrFormat("%.1f us", us);
}

std::string Bytes(int64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  return absl::StrFormat("%.1f KiB", bytes / 1024.0);
}

// "label: a, b, c" from the parts that were measured; "" when none was.
void AppendParts(std::string* out, absl::string_view label, const std::vector<std::string>& parts) {
  if (parts.empty()) return;
  absl::StrAppend(out, "    ", label, ": ", absl::StrJoin(parts, ", "), "\n");
}

void AppendKernel(std::string* out, const KernelProfile& k) {
  absl::StrAppend(out, "  ", k.name().empty() ? "kernel" : PrintableText(k.name(), kMaxName), " — ",
                  Duration(k.duration_us()), " over ", k.launches(),
                  k.launches() == 1 ? " launch" : " launches");
  if (k.grid_size() > 0 && k.block_size() > 0) {
    absl::StrAppend(out, "; grid ", k.grid_size(), ", block ", k.block_size());
  }
  absl::StrAppend(out, "\n");
  std::vector<std::string> parts;
  auto add = [&](absl::string_view name, double v) {
    if (Measured(v)) parts.push_back(absl::StrCat(name, " ", Percent(v)));
  };
  add("SM", k.sm_throughput_pct());
  add("memory", k.memory_throughput_pct());
  add("DRAM", k.dram_throughput_pct());
  add("tensor pipe", k.tensor_pipe_pct());
  AppendParts(out, "throughput of peak", parts);

  parts.clear();
  if (Measured(k.achieved_occupancy_pct())) {
    std::string o = absl::StrCat(Percent(k.achieved_occupancy_pct()), " achieved");
    if (Measured(k.theoretical_occupancy_pct())) {
      absl::StrAppend(&o, " of ", Percent(k.theoretical_occupancy_pct()), " theoretical");
    }
    if (!k.occupancy_limiter().empty()) absl::StrAppend(&o, " (limited by ", k.occupancy_limiter(), ")");
    parts.push_back(std::move(o));
  }
  if (k.registers_per_thread() > 0) {
    parts.push_back(absl::StrCat(k.registers_per_thread(), " registers/thread"));
  }
  if (k.shared_memory_per_block_bytes() >= 0) {
    parts.push_back(absl::StrCat(Bytes(k.shared_memory_per_block_bytes()), " shared memory/block"));
  }
  AppendParts(out, "occupancy", parts);

  parts.clear();
  if (Measured(k.l1_hit_rate_pct())) parts.push_back(absl::StrCat("L1 ", Percent(k.l1_hit_rate_pct())));
  if (Measured(k.l2_hit_rate_pct())) parts.push_back(absl::StrCat("L2 ", Percent(k.l2_hit_rate_pct())));
  AppendParts(out, "cache hit rates", parts);

  parts.clear();
  for (const auto& s : k.stalls()) {
    parts.push_back(absl::StrFormat("%s %.2f", s.reason(), s.cycles_per_instruction()));
  }
  AppendParts(out, "top stalls (cycles per instruction)", parts);
}

}  // namespace

std::string ShortKernelName(absl::string_view name) {
  // Kept bounded before any work: a name may be megabytes.
  name = absl::StripAsciiWhitespace(name.substr(0, 4 * kCensusNameBytes + 1024));
  absl::ConsumePrefix(&name, "void ");
  std::string out;
  int depth = 0;
  for (char c : name) {
    if (c == '<') {
      if (depth++ == 0) out += "<...>";
      continue;
    }
    if (c == '>' && depth > 0) {
      --depth;
      continue;
    }
    if (depth > 0) continue;
    if (c == '(') break;  // the parameter list
    out += c;
  }
  out = PrintableText(absl::StripAsciiWhitespace(out), out.size());
  // Cut in the middle: a library's kernel says whose it is at its end
  // ("..._cublas"), its kind at its start.
  constexpr size_t kTail = 21;
  if (out.size() > kCensusNameBytes) {
    out = absl::StrCat(out.substr(0, kCensusNameBytes - 3 - kTail), "...",
                       out.substr(out.size() - kTail));
  }
  return out.empty() ? "?" : out;
}

namespace {

const char* OriginName(ptxbench::v1::KernelOrigin origin) {
  switch (origin) {
    case ptxbench::v1::SUBMISSION:
      return "submission";
    case ptxbench::v1::MEMORY:
      return "memory";
    case ptxbench::v1::LIBRARY:
      return "library";
    default:
      return "origin unknown";
  }
}

}  // namespace

std::string CensusKernelNames(const ptxbench::v1::KernelCensus& census,
                              ptxbench::v1::KernelOrigin origin, int max_names) {
  std::vector<std::string> names;
  int more = 0;
  for (const ptxbench::v1::LaunchedKernel& k : census.kernels()) {
    if (k.origin() != origin) continue;
    if (static_cast<int>(names.size()) < max_names) {
      names.push_back(ShortKernelName(k.name()));
    } else {
      ++more;
    }
  }
  std::string out = absl::StrJoin(names, ", ");
  if (more > 0) absl::StrAppend(&out, " and ", more, " more");
  return out;
}

std::string RenderKernelCensus(const ptxbench::v1::KernelCensus& census, absl::string_view indent) {
  std::string out;
  if (!census.kernels().empty()) {
    std::vector<std::string> parts;
    double rest_ms = 0;
    int rest = 0;
    for (const ptxbench::v1::LaunchedKernel& k : census.kernels()) {
      if (static_cast<int>(parts.size()) < kCensusKernelsShown) {
        parts.push_back(absl::StrFormat("%s (%s) %.4f ms, %d %s", ShortKernelName(k.name()),
                                        OriginName(k.origin()), k.ms_per_call(), k.launches(),
                                        k.launches() == 1 ? "launch" : "launches"));
      } else {
        ++rest;
        rest_ms += k.ms_per_call();
      }
    }
    if (rest > 0) parts.push_back(absl::StrFormat("+%d more, %.4f ms", rest, rest_ms));
    // GPU time of the bracket no kernel listed covers (the worker says what
    // it counts; the gap line below says when the census was silenced).
    if (census.unaccounted_ms_per_call() > 0) {
      parts.push_back(absl::StrFormat("not accounted for %.4f ms", census.unaccounted_ms_per_call()));
    }
    absl::StrAppend(&out, indent, "kernels that ran (per timed call): ", absl::StrJoin(parts, "; "),
                    "\n");
  }
  const bool missed_calls = census.calls_seen() < census.calls_timed();
  if (!census.gap().empty() || missed_calls) {
    std::string gap = PrintableText(absl::StripAsciiWhitespace(census.gap()), kCensusGapBytes);
    if (gap.empty()) gap = "not every timed call was seen";
    absl::StrAppend(&out, indent, "census incomplete: ", gap);
    if (missed_calls) {
      absl::StrAppend(&out, " (", census.calls_seen(), " of ", census.calls_timed(),
                      " timed calls seen)");
    }
    absl::StrAppend(&out, "\n");
  }
  return out;
}

std::string AxesLabel(const std::map<std::string, int64_t>& axes) {
  if (axes.empty()) return "";
  return absl::StrCat("[",
                      absl::StrJoin(axes, ", ",
                                    [](std::string* out, const auto& kv) {
                                      absl::StrAppend(out, kv.first, "=", kv.second);
                                    }),
                      "]");
}

std::string RenderSassCensus(const ptxbench::v1::SassCensus& sass) {
  if (sass.instructions() <= 0) return "";
  const std::map<std::string, int64_t> counts(sass.instruction_counts().begin(),
                                              sass.instruction_counts().end());
  std::vector<std::string> families;
  int64_t local = 0;
  for (const auto& [family, n] : counts) {
    if (n <= 0) continue;
    if (family == "LDL" || family == "STL") {
      local += n;
      continue;
    }
    families.push_back(absl::StrCat(family, " ", n));
  }
  std::string out = absl::StrCat("SASS (cuobjdump): ", sass.instructions(), " instructions; ",
                                 families.empty() ? "none of the tensor-core, TMA or async-copy "
                                                    "families"
                                                  : absl::StrJoin(families, ", "),
                                 "; ");
  if (local == 0) {
    absl::StrAppend(&out, "no local-memory loads or stores.\n");
  } else {
    auto count = [&](const char* f) {
      auto it = counts.find(f);
      return it == counts.end() ? int64_t{0} : it->second;
    };
    absl::StrAppend(&out, "local memory (spills or stack arrays): LDL ", count("LDL"), ", STL ",
                    count("STL"), ".\n");
  }
  return out;
}

std::string RenderProfile(const KernelProfileRun& profile, int max_kernels) {
  std::string out;
  if (profile.simulated()) absl::StrAppend(&out, kSimulatedProfile, "\n");
  const std::map<std::string, int64_t> axes(profile.axes().begin(), profile.axes().end());
  std::string where = AxesLabel(axes);
  if (where.empty()) where = profile.workload_uuid();
  absl::StrAppend(&out, "Profile (", profile.tool().empty() ? "profiler" : profile.tool(),
                  "; workload ", where);
  if (profile.status() != ptxbench::v1::PASSED) {
    absl::StrAppend(&out, "): ", ptxbench::v1::EvalStatus_Name(profile.status()), " — ",
                    profile.status() == ptxbench::v1::TIMEOUT
                        ? "the kernel ran past the profile's deadline"
                    : profile.status() == ptxbench::v1::RUNTIME_ERROR
                        ? "the kernel failed under the profiler"
                        : "the profiler failed (not the kernel's fault)",
                    "; no profile.\n");
    int lines = 0;
    for (absl::string_view line :
         absl::StrSplit(absl::StripTrailingAsciiWhitespace(profile.error()), '\n')) {
      if (line.empty() || ++lines > kErrorLines) continue;
      absl::StrAppend(&out, "  ", PrintableText(line, kMaxErrorLine), "\n");
    }
    return out;
  }
  const int shown = std::min<int>(profile.kernels_size(), std::max(max_kernels, 0));
  absl::StrAppend(&out, "; ", profile.kernels_profiled(),
                  profile.kernels_profiled() == 1 ? " kernel" : " kernels", " profiled");
  if (shown < profile.kernels_size() || shown < profile.kernels_profiled()) {
    absl::StrAppend(&out, ", the ", shown, " longest shown");
  }
  absl::StrAppend(&out, "):\n");
  for (int i = 0; i < shown; ++i) AppendKernel(&out, profile.kernels(i));
  if (profile.kernels_size() == 0) absl::StrAppend(&out, "  (no kernel of yours ran)\n");
  return out;
}

}  // namespace ptxbench
