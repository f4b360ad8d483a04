#include "worker/profile/ncu_summary.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/printable_text.h"
#include "worker/profile/ncu_csv.h"

namespace ptxbench::worker {
namespace {

using ::ptxbench::v1::KernelProfile;

constexpr char kDuration[] = "gpu__time_duration.sum";
constexpr char kSm[] = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
constexpr char kMemory[] = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
constexpr char kDram[] = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed";
constexpr char kAchieved[] = "sm__warps_active.avg.pct_of_peak_sustained_active";
constexpr char kTheoretical[] = "sm__maximum_warps_per_active_cycle_pct";
constexpr char kRegisters[] = "launch__registers_per_thread";
constexpr char kStaticShared[] = "launch__shared_mem_per_block_static";
constexpr char kDynamicShared[] = "launch__shared_mem_per_block_dynamic";
constexpr char kBlock[] = "launch__block_size";
constexpr char kGrid[] = "launch__grid_size";
constexpr char kTensor[] = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active";
constexpr char kL1[] = "l1tex__t_sector_hit_rate.pct";
constexpr char kL2[] = "lts__t_sector_hit_rate.pct";
constexpr char kStallPrefix[] = "smsp__average_warps_issue_stalled_";
constexpr char kStallSuffix[] = "_per_issue_active.ratio";
constexpr size_t kMaxNameBytes = 200;

// What limits the blocks per SM, in the order ties are named.
const std::vector<std::pair<std::string, std::string>>& Limiters() {
  static const auto* limiters = new std::vector<std::pair<std::string, std::string>>{
      {"launch__occupancy_limit_registers", "registers"},
      {"launch__occupancy_limit_shared_mem", "shared memory"},
      {"launch__occupancy_limit_warps", "warps"},
      {"launch__occupancy_limit_blocks", "blocks"},
      {"launch__occupancy_limit_barriers", "barriers"},
  };
  return *limiters;
}

// Warp states that are stalls ("selected" is issuing, not a stall).
const std::vector<std::string>& StallReasons() {
  static const auto* reasons = new std::vector<std::string>{
      "barrier",         "branch_resolving", "dispatch_stall",     "drain",
      "gmma",            "imc_miss",         "lg_throttle",        "long_scoreboard",
      "math_pipe_throttle", "membar",        "mio_throttle",       "misc",
      "no_instruction",  "not_selected",     "short_scoreboard",   "sleeping",
      "tex_throttle",    "wait",
  };
  return *reasons;
}

// -1 when not measured, as KernelProfile has it.
double Or(const NcuRow& row, const std::string& metric) { return row.Number(metric).value_or(-1); }

KernelProfile FromRow(const NcuRow& row, const std::string& name) {
  KernelProfile k;
  k.set_name(name);
  k.set_launches(1);
  k.set_duration_us(std::max(0.0, Or(row, kDuration)));
  k.set_sm_throughput_pct(Or(row, kSm));
  k.set_memory_throughput_pct(Or(row, kMemory));
  k.set_dram_throughput_pct(Or(row, kDram));
  k.set_achieved_occupancy_pct(Or(row, kAchieved));
  k.set_theoretical_occupancy_pct(Or(row, kTheoretical));
  k.set_tensor_pipe_pct(Or(row, kTensor));
  k.set_l1_hit_rate_pct(Or(row, kL1));
  k.set_l2_hit_rate_pct(Or(row, kL2));
  k.set_registers_per_thread(static_cast<int32_t>(std::max(0.0, Or(row, kRegisters))));
  const std::optional<double> st = row.Number(kStaticShared), dyn = row.Number(kDynamicShared);
  k.set_shared_memory_per_block_bytes(
      st || dyn ? static_cast<int64_t>(st.value_or(0) + dyn.value_or(0)) : -1);
  k.set_block_size(static_cast<int32_t>(std::max(0.0, Or(row, kBlock))));
  k.set_grid_size(static_cast<int64_t>(std::max(0.0, Or(row, kGrid))));
  // The limiter: the fewest blocks per SM, named only when it limits.
  if (k.theoretical_occupancy_pct() >= 0 && k.theoretical_occupancy_pct() < 100) {
    std::optional<double> fewest;
    for (const auto& [metric, what] : Limiters()) {
      std::optional<double> v = row.Number(metric);
      if (v && (!fewest || *v < *fewest)) {
        fewest = v;
        k.set_occupancy_limiter(what);
      }
    }
  }
  std::vector<std::pair<double, std::string>> stalls;
  for (const std::string& reason : StallReasons()) {
    std::optional<double> v = row.Number(absl::StrCat(kStallPrefix, reason, kStallSuffix));
    if (v && *v > 0) stalls.emplace_back(*v, reason);
  }
  std::sort(stalls.begin(), stalls.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  for (size_t i = 0; i < stalls.size() && i < kMaxStalls; ++i) {
    auto* s = k.add_stalls();
    s->set_reason(stalls[i].second);
    s->set_cycles_per_instruction(stalls[i].first);
  }
  return k;
}

}  // namespace

const std::vector<std::string>& NcuMetrics() {
  static const auto* metrics = [] {
    auto* m = new std::vector<std::string>{kDuration, kSm,      kMemory,       kDram,
                                           kAchieved, kTheoretical, kRegisters, kStaticShared,
                                           kDynamicShared, kBlock, kGrid,        kTensor,
                                           kL1,       kL2};
    for (const auto& [metric, what] : Limiters()) m->push_back(metric);
    for (const std::string& r : StallReasons()) {
      m->push_back(absl::StrCat(kStallPrefix, r, kStallSuffix));
    }
    return m;
  }();
  return *metrics;
}

absl::StatusOr<NcuSummary> SummarizeNcuCsv(absl::string_view csv,
                                           const std::vector<std::string>& skip) {
  NcuSummary summary;
  const std::vector<std::vector<std::string>> rows = ParseCsv(csv);
  if (rows.empty()) return summary;
  std::map<std::string, size_t> columns;
  for (size_t i = 0; i < rows[0].size(); ++i) columns.emplace(rows[0][i], i);
  if (!columns.contains("Kernel Name") || !columns.contains("ID")) {
    return absl::InvalidArgumentError(
        "the profiler's CSV has no \"ID\" and \"Kernel Name\" columns");
  }
  const std::vector<std::string> no_units;
  const std::vector<std::string>& units = rows.size() > 1 ? rows[1] : no_units;
  // Launches by kernel, in order of first appearance.
  std::vector<KernelProfile> kernels;
  std::map<std::string, size_t> index;
  std::map<std::string, double> longest;
  for (size_t r = 2; r < rows.size(); ++r) {
    const NcuRow row(columns, units, rows[r]);
    const std::string name = PrintableText(row.Text("Kernel Name"), kMaxNameBytes);
    if (name.empty() || std::find(skip.begin(), skip.end(), name) != skip.end()) continue;
    ++summary.launches;
    KernelProfile launch = FromRow(row, name);
    auto [it, added] = index.emplace(name, kernels.size());
    if (added) {
      kernels.push_back(launch);
      longest[name] = launch.duration_us();
      continue;
    }
    KernelProfile& k = kernels[it->second];
    const double total = k.duration_us() + launch.duration_us();
    const int launches = k.launches() + 1;
    if (launch.duration_us() > longest[name]) {
      longest[name] = launch.duration_us();
      k = launch;
    }
    k.set_duration_us(total);
    k.set_launches(launches);
  }
  summary.kernels_profiled = static_cast<int>(kernels.size());
  std::stable_sort(kernels.begin(), kernels.end(), [](const auto& a, const auto& b) {
    return a.duration_us() > b.duration_us();
  });
  if (kernels.size() > kMaxProfiledKernels) kernels.resize(kMaxProfiledKernels);
  summary.kernels = std::move(kernels);
  return summary;
}

void MoveInto(NcuSummary&& summary, ::ptxbench::v1::KernelProfileRun& run) {
  for (KernelProfile& k : summary.kernels) *run.add_kernels() = std::move(k);
  run.set_kernels_profiled(summary.kernels_profiled);
}

}  // namespace ptxbench::worker
