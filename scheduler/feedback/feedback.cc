#include "scheduler/feedback/feedback.h"

#include <cmath>
#include <map>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "results/eval_text.h"
#include "scheduler/feedback/extract.h"
#include "verdict/verdict.h"

namespace ptxbench::scheduler {
namespace {

using ::ptxbench::v1::EvalResult;
using ::ptxbench::v1::EvalStatus;
using ::ptxbench::v1::WorkloadTrace;

constexpr absl::string_view kSimulatedBanner = "[SIMULATED RESULT — not a real measurement]";
constexpr absl::string_view kFixSuffix = "Please fix the issues and provide an updated kernel.";
constexpr absl::string_view kCompileOnlySuffix =
    "Compile-only evaluation: correctness and speed were not measured.";

std::string StatusName(EvalStatus status) { return ptxbench::v1::EvalStatus_Name(status); }

// "[K=5120, M=8192, N=7168]": std::map order, since the definition's axis
// order is not part of the result. Falls back to the uuid.
std::string AxesLabel(const WorkloadTrace& trace, int index) {
  if (trace.axes().empty()) {
    if (!trace.workload_uuid().empty()) return absl::StrCat("[", trace.workload_uuid(), "]");
    return absl::StrCat("[workload ", index, "]");
  }
  return ptxbench::AxesLabel(std::map<std::string, int64_t>(trace.axes().begin(), trace.axes().end()));
}

std::string ErrorValue(double v, bool defined) {
  if (!defined || !std::isfinite(v)) return "NaN/Inf";
  return absl::StrFormat("%.3e", v);
}

// Appends `text` with every line indented by `indent`; skips blank text.
void AppendIndented(std::string* out, absl::string_view text, absl::string_view indent) {
  text = absl::StripTrailingAsciiWhitespace(text);
  if (text.empty()) return;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    absl::StrAppend(out, indent, absl::StripSuffix(line, "\r"), "\n");
  }
}

// A workload the census made a fallback (worker/runner/measure/census.h): library
// compute ran in its timed calls, or GPU work the census could not see.
bool IsCensusFallback(const WorkloadTrace& trace) {
  return trace.status() == ptxbench::v1::LIBRARY_FALLBACK && trace.has_census();
}

// The kernels named, whether the outputs were right, what must change; then
// the census's lines. The trace's errors and log are left out: the worker's
// finding says what the census lines say, and they are bounded.
void AppendFallbackTrace(std::string* out, const WorkloadTrace& trace, absl::string_view label) {
  const std::string libraries = CensusKernelNames(trace.census(), ptxbench::v1::LIBRARY);
  absl::StrAppend(out, label, " LIBRARY_FALLBACK — ",
                  libraries.empty()
                      ? "the census could not account for all of the timed call's GPU work"
                      : absl::StrCat("the timed call ran library kernels: ", libraries),
                  trace.census().outputs_correct() ? " (the outputs passed the checks)" : "",
                  ". The timed call must run your submission's own kernels.\n");
  AppendIndented(out, RenderKernelCensus(trace.census(), ""), "  ");
}

void AppendTrace(std::string* out, const WorkloadTrace& trace, int index) {
  std::string label = AxesLabel(trace, index);
  if (trace.status() == ptxbench::v1::PASSED) {
    absl::StrAppend(
        out, absl::StrFormat("%s PASSED — speedup: %.3fx (kernel: %.4fms, ref: %.4fms)\n", label,
                             trace.speedup(), trace.latency_ms(), trace.reference_latency_ms()));
    // What ran, for every timed workload: memory kernels are listed too.
    AppendIndented(out, RenderKernelCensus(trace.census(), ""), "  ");
    return;
  }
  if (IsCensusFallback(trace)) {
    AppendFallbackTrace(out, trace, label);
    return;
  }
  // The errors are measured only when outputs were compared numerically;
  // for a crash, a timeout or a shape mismatch they are undefined.
  bool measured = trace.status() == ptxbench::v1::INCORRECT_NUMERICAL;
  absl::StrAppend(out, label, " ", StatusName(trace.status()), "\n");
  absl::StrAppend(out, "  max_abs_error=", ErrorValue(trace.max_abs_error(), measured),
                  ", max_rel_error=", ErrorValue(trace.max_rel_error(), measured), "\n");
  AppendIndented(out, trace.log(), "  ");
  for (const std::string& error : trace.errors()) AppendIndented(out, error, "  ");
  AppendIndented(out, RenderKernelCensus(trace.census(), ""), "  ");
}

// One line per kernel, in ptxas terms.
void AppendResources(std::string* out, const EvalResult& result) {
  if (result.resources().empty()) return;
  absl::StrAppend(out, "\nResources (ptxas):\n");
  for (const auto& r : result.resources()) {
    absl::StrAppend(out, absl::StrFormat("  %s: %d registers, %d bytes smem, %d bytes stack, "
                                         "%d bytes spill stores, %d bytes spill loads\n",
                                         r.kernel_name().empty() ? "kernel" : r.kernel_name(),
                                         r.registers(), r.shared_mem_bytes(), r.stack_frame_bytes(),
                                         r.spill_store_bytes(), r.spill_load_bytes()));
  }
}

template <typename Counts>
bool CensusHas(const Counts& counts, absl::string_view family_prefix) {
  for (const auto& [family, count] : counts) {
    if (count > 0 && absl::StartsWith(family, family_prefix)) return true;
  }
  return false;
}

// What the GPU runs, when the worker could see it (cuobjdump).
void AppendSass(std::string* out, const EvalResult& result) {
  if (!result.has_sass()) return;
  const std::string line = RenderSassCensus(result.sass());
  if (!line.empty()) absl::StrAppend(out, "\n", line);
}

void AppendProfile(std::string* out, const EvalResult& result) {
  if (!result.has_profile()) return;
  absl::StrAppend(out, "\n", RenderProfile(result.profile()));
}

// The memcheck gate stopped the evaluation: the traces below carry the
// sanitizer's report as their log (PTXBench's feedback shows it the same way).
void AppendMemcheckNote(std::string* out, const EvalResult& result) {
  const EvalStatus gate = result.memcheck().status();
  if (!result.has_memcheck() || (gate != ptxbench::v1::RUNTIME_ERROR && gate != ptxbench::v1::TIMEOUT)) {
    return;
  }
  absl::StrAppend(out, gate == ptxbench::v1::TIMEOUT
                           ? "The memcheck gate (compute-sanitizer memcheck, before timing) did not "
                             "finish: the kernel was not timed.\n"
                           : "The memcheck gate (compute-sanitizer memcheck, before timing) found "
                             "memory errors, reported below: the kernel was not timed.\n");
}

// The fallback was found at run time, by the census (not at the build).
bool CensusFallback(const EvalResult& result) {
  for (const auto& t : result.traces()) {
    if (IsCensusFallback(t)) return true;
  }
  return false;
}

// Hopper: a correct kernel without wgmma or bulk copies leaves most of the
// machine idle. Only said when a census was taken, and only of a kernel
// built for Hopper (results before compile_target was recorded all were):
// wgmma does not exist on other GPUs. The SASS census, where there is one,
// decides: it is what runs (a wgmma in the PTX may be lowered otherwise).
void AppendInstructionWarning(std::string* out, const EvalResult& result) {
  if (!verdict::Correct(result)) return;
  if (!result.compile_target().empty() && result.compile_target() != "sm_90a") return;
  if (result.has_sass() && result.sass().instructions() > 0) {
    const auto& counts = result.sass().instruction_counts();
    if (CensusHas(counts, "HGMMA") || CensusHas(counts, "IGMMA") || CensusHas(counts, "QGMMA") ||
        CensusHas(counts, "UTMA") || CensusHas(counts, "UBLK")) {
      return;
    }
    absl::StrAppend(out,
                    "\nInstruction warning: the SASS the GPU runs contains no Hopper "
                    "tensor-core (HGMMA) or TMA/bulk-copy (UTMA*, UBLK*) instructions. On "
                    "sm_90a these are needed to approach the hardware's peak.\n");
    return;
  }
  if (result.ptx().sha256().empty()) return;
  const auto& counts = result.ptx().instruction_counts();
  if (CensusHas(counts, "wgmma.") || CensusHas(counts, "cp.async.bulk.")) return;
  absl::StrAppend(out,
                  "\nInstruction warning: the PTX contains no Hopper tensor-core "
                  "(wgmma.) or bulk-copy (cp.async.bulk.) instructions. On sm_90a "
                  "these are needed to approach the hardware's peak.\n");
}

void AppendSection(std::string* out, absl::string_view title, absl::string_view text) {
  if (absl::StripAsciiWhitespace(text).empty()) return;
  absl::StrAppend(out, "\n", title, "\n", absl::StripTrailingAsciiWhitespace(text), "\n");
}

// The body for a failure that produced no per-workload results.
void AppendFailureBeforeResults(std::string* out, const EvalResult& result) {
  switch (result.status()) {
    case ptxbench::v1::COMPILE_ERROR:
      absl::StrAppend(out, "Evaluation FAILED: COMPILE_ERROR — the kernel did not compile.\n");
      AppendSection(out, "Compiler output:", result.compile_log());
      return;
    case ptxbench::v1::RUNTIME_ERROR:
      absl::StrAppend(out,
                      "Evaluation FAILED: RUNTIME_ERROR — the kernel crashed before "
                      "producing results.\n");
      break;
    case ptxbench::v1::TIMEOUT:
      absl::StrAppend(out,
                      "Evaluation FAILED: TIMEOUT — the evaluation exceeded its time "
                      "limit before producing results.\n");
      break;
    default:
      absl::StrAppend(out, "Evaluation FAILED: ", StatusName(result.status()),
                      " — no workload results were produced.\n");
      break;
  }
  AppendSection(out, "Run output:", result.error());
  AppendSection(out, "Compiler output:", result.compile_log());
  AppendResources(out, result);
}

}  // namespace

std::string RenderNoCodeFeedback(absl::string_view language) {
  const absl::string_view tag = AnswerFence(language);
  return absl::StrCat("No ```", tag,
                      " code block could be extracted from your answer. Please provide "
                      "the complete kernel in a single ```",
                      tag, " block.");
}

std::string RenderEvalFeedback(const ptxbench::v1::EvalResult& result, double target_speedup) {
  std::string out;
  if (result.simulated()) absl::StrAppend(&out, kSimulatedBanner, "\n");

  absl::string_view suffix = kFixSuffix;
  if (result.status() == ptxbench::v1::COMPILED) {
    absl::StrAppend(&out,
                    "Compilation succeeded: the kernel was built but not run on a GPU "
                    "(compile-only evaluation), so its correctness and speed are "
                    "unknown.\n");
    AppendResources(&out, result);
    suffix = kCompileOnlySuffix;
  } else if (result.status() == ptxbench::v1::LIBRARY_FALLBACK && CensusFallback(result)) {
    absl::StrAppend(&out,
                    "Evaluation FAILED: LIBRARY_FALLBACK — the timed calls ran library compute, "
                    "or GPU work the kernel census could not see, instead of your kernels "
                    "(per workload below). Library kernels may only fill or copy memory: the "
                    "timed call must run your submission's own kernels.\n");
    int index = 0;
    for (const auto& trace : result.traces()) AppendTrace(&out, trace, index++);
    AppendResources(&out, result);
  } else if (result.status() == ptxbench::v1::LIBRARY_FALLBACK) {
    absl::StrAppend(&out,
                    "Evaluation FAILED: LIBRARY_FALLBACK — your kernel calls a vendor "
                    "library (cuBLAS/cuDNN/CUTLASS) instead of a hand-written kernel. "
                    "This is not allowed: write the kernel yourself.\n");
    AppendSection(&out, "Details:", result.error());
    int index = 0;
    for (const auto& trace : result.traces()) AppendTrace(&out, trace, index++);
  } else if (result.status() == ptxbench::v1::COMPILE_ERROR || result.traces().empty()) {
    AppendFailureBeforeResults(&out, result);
  } else {
    bool any_passed = false;
    for (const auto& t : result.traces()) any_passed |= t.status() == ptxbench::v1::PASSED;
    absl::StrAppend(&out, any_passed ? "Evaluation results:\n" : "Evaluation FAILED:\n");
    AppendMemcheckNote(&out, result);
    int index = 0;
    for (const auto& trace : result.traces()) AppendTrace(&out, trace, index++);
    AppendResources(&out, result);
    AppendSass(&out, result);
    AppendProfile(&out, result);
    AppendInstructionWarning(&out, result);
    if (TargetMet(result, target_speedup)) {
      absl::StrAppend(&out, "\n",
                      absl::StrFormat("Target speedup %.3fx achieved! Min speedup: %.3fx.",
                                      target_speedup, result.min_speedup()));
      return out;
    }
    if (verdict::Correct(result)) {
      absl::StrAppend(&out, "\n",
                      absl::StrFormat("Kernel is correct. Min speedup: %.3fx (target: "
                                      "%.3fx). Keep optimizing.",
                                      result.min_speedup(), target_speedup));
      return out;
    }
  }
  absl::StrAppend(&out, "\n", suffix);
  return out;
}

}  // namespace ptxbench::scheduler
