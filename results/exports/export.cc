#include "results/exports/export.h"

#include <cmath>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "results/exports/flashinfer_writer.h"
#include "results/exports/output_dir.h"
#include "results/exports/ptxbench_writer.h"
#include "results/exports/sft_writer.h"
#include "results/exports/tables.h"
#include "results/exports/text.h"

namespace ptxbench::exports {
namespace {

constexpr std::pair<const char*, Format> kFormats[] = {
    {"csv", Format::kCsv},
    {"jsonl", Format::kJsonl},
    {"ptxbench", Format::kPtxbench},
    {"flashinfer-trace", Format::kFlashinferTrace},
    {"sft", Format::kSft},
};

constexpr absl::string_view kMinSpeedupPrefix = "min-speedup=";

}  // namespace

absl::StatusOr<Format> ParseFormat(absl::string_view name) {
  for (const auto& [known, format] : kFormats) {
    if (name == known) return format;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown export format \"", name, "\"; the formats are csv, jsonl, ptxbench, "
      "flashinfer-trace and sft"));
}

absl::string_view FormatName(Format format) {
  for (const auto& [known, f] : kFormats) {
    if (f == format) return known;
  }
  return "?";
}

ptxbench::v1::TurnDetail DetailFor(Format format) {
  return format == Format::kCsv || format == Format::kJsonl ? ptxbench::v1::TURN_DETAIL_RESULTS
                                                            : ptxbench::v1::TURN_DETAIL_FULL;
}

absl::StatusOr<SftFilter> ParseSftFilter(absl::string_view text) {
  SftFilter filter;
  if (text == "correct") return filter;
  if (text == "best") {
    filter.kind = SftFilter::Kind::kBest;
    return filter;
  }
  if (absl::StartsWith(text, kMinSpeedupPrefix)) {
    double x = 0;
    const absl::string_view number = text.substr(kMinSpeedupPrefix.size());
    if (absl::SimpleAtod(number, &x) && std::isfinite(x) && x > 0) {
      filter.kind = SftFilter::Kind::kMinSpeedup;
      filter.min_speedup = x;
      return filter;
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "SFT filter \"", text, "\": the minimum speedup must be a positive number, e.g. "
        "min-speedup=1.5"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown SFT filter \"", text, "\"; the filters are correct, best and min-speedup=X"));
}

std::string SftFilterName(const SftFilter& filter) {
  switch (filter.kind) {
    case SftFilter::Kind::kCorrect:
      return "correct";
    case SftFilter::Kind::kBest:
      return "best";
    case SftFilter::Kind::kMinSpeedup:
      break;
  }
  std::string out(kMinSpeedupPrefix);
  AppendDouble(&out, filter.min_speedup);
  return out;
}

absl::StatusOr<std::unique_ptr<Writer>> MakeWriter(Format format, const std::string& out_dir,
                                                   const Options& options) {
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<OutputDir> dir, OutputDir::Create(out_dir));
  switch (format) {
    case Format::kCsv:
    case Format::kJsonl:
      return MakeTableWriter(format, std::move(dir));
    case Format::kPtxbench:
      return MakePtxbenchWriter(std::move(dir), options);
    case Format::kFlashinferTrace:
      return MakeFlashinferWriter(std::move(dir), options);
    case Format::kSft:
      return MakeSftWriter(std::move(dir), options);
  }
  return absl::InvalidArgumentError("unknown export format");
}

}  // namespace ptxbench::exports
