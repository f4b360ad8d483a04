// The select stage's choice (select.h).

#include "pipelines/select.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/hash.h"
#include "verdict/verdict.h"

namespace ptxbench::pipelines {
namespace {

namespace v1 = ::ptxbench::v1;

bool Contains(const nlohmann::json& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

bool Matches(const Row& row, const nlohmann::json& params) {
  const bool correct = params["rows"] == "correct";
  // A compile-only COMPILED judged nothing but the compile: it is no
  // failure, and correct only where accept_compiled says so.
  const bool compiled = row.status == "COMPILED";
  if (correct) {
    const bool accepted =
        row.correct || (compiled && params.value("accept_compiled", "no") == "yes");
    if (!accepted) return false;
    if (params.contains("min_speedup") && row.speedup < params["min_speedup"].get<double>()) {
      return false;
    }
  } else if (params.contains("statuses") ? !Contains(params["statuses"], row.status)
                                         : row.correct || compiled) {
    return false;
  }
  if (params.contains("max_turn") && row.turn > params["max_turn"].get<int64_t>()) return false;
  if (params.contains("prompt_tags") && !Contains(params["prompt_tags"], row.prompt_tag)) {
    return false;
  }
  return params.value("arch_features", "any") != "hopper" || row.hopper;
}

// Proportional shares of `cap` over strata of `sizes` (largest remainder,
// ties to the earlier stratum), none above its size.
std::vector<int64_t> Shares(const std::vector<int64_t>& sizes, int64_t cap) {
  int64_t total = 0;
  for (int64_t n : sizes) total += n;
  std::vector<int64_t> shares(sizes.size());
  std::vector<std::pair<double, size_t>> remainders;
  int64_t given = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const double exact = static_cast<double>(cap) * sizes[i] / total;
    shares[i] = static_cast<int64_t>(std::floor(exact));
    given += shares[i];
    remainders.push_back({exact - shares[i], i});
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t k = 0; given < cap && k < remainders.size(); ++k) {
    const size_t i = remainders[k].second;
    if (shares[i] < sizes[i]) {
      ++shares[i];
      ++given;
    }
  }
  return shares;
}

// At most `cap` of one definition's rows: each (status, turn) stratum its
// share, the rows of a stratum in the order of their seeded hashes.
std::vector<Row> Cap(std::vector<Row> rows, int64_t cap, const std::string& seed) {
  if (static_cast<int64_t>(rows.size()) <= cap) return rows;
  std::map<std::pair<std::string, int>, std::vector<Row>> strata;
  for (Row& r : rows) strata[{r.status, r.turn}].push_back(std::move(r));
  std::vector<int64_t> sizes;
  for (const auto& [key, members] : strata) sizes.push_back(static_cast<int64_t>(members.size()));
  const std::vector<int64_t> shares = Shares(sizes, cap);
  std::vector<Row> out;
  size_t i = 0;
  for (auto& [key, members] : strata) {
    std::vector<std::pair<std::string, Row*>> ordered;
    for (Row& r : members) {
      ordered.push_back(
          {Sha256Hex(absl::StrCat(seed, "\n", r.experiment_id, "\n", r.trajectory_id, "\n", r.turn)),
           &r});
    }
    std::sort(ordered.begin(), ordered.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (int64_t k = 0; k < shares[i]; ++k) out.push_back(std::move(*ordered[k].second));
    ++i;
  }
  return out;
}

}  // namespace

std::vector<Row> RowsOf(const std::string& experiment_id, const v1::Trajectory& t) {
  std::vector<Row> out;
  for (const v1::Turn& turn : t.turns()) {
    if (!turn.has_eval() || turn.kernel_sha256().empty()) continue;
    const v1::EvalStatus status = turn.eval().status();
    if (status == v1::INFRA_ERROR || status == v1::EVAL_STATUS_UNSPECIFIED) {
      continue;
    }
    Row r;
    r.experiment_id = experiment_id;
    r.trajectory_id = t.summary().trajectory_id();
    r.definition = t.summary().definition();
    r.prompt_tag = t.summary().prompt_tag();
    r.turn = turn.index();
    r.status = v1::EvalStatus_Name(status);
    // The verdict's: 0 unless correct, whatever an old simulated result wrote.
    r.correct = verdict::Correct(turn.eval());
    r.speedup = verdict::MinSpeedup(turn.eval());
    r.kernel_sha256 = turn.kernel_sha256();
    // What the GPU runs (the SASS census) where the worker could list it;
    // else what the PTX asks for.
    const auto& counts = turn.eval().has_sass() ? turn.eval().sass().architecture_counts()
                                                : turn.eval().ptx().architecture_counts();
    auto hopper = counts.find("hopper");
    r.hopper = hopper != counts.end() && hopper->second > 0;
    r.hopper_from = turn.eval().has_sass() ? "sass" : "ptx";
    out.push_back(std::move(r));
  }
  return out;
}

Selection Select(const std::vector<Row>& candidates, const nlohmann::json& params) {
  Selection out;
  out.candidates = static_cast<int64_t>(candidates.size());
  std::map<std::string, std::vector<Row>> by_definition;
  for (const Row& r : candidates) {
    if (Matches(r, params)) by_definition[r.definition].push_back(r);
  }
  const std::string seed = params.value("seed", "ptxbench");
  for (auto& [definition, rows] : by_definition) {
    out.matched += static_cast<int64_t>(rows.size());
    if (params.contains("per_definition_cap")) {
      rows = Cap(std::move(rows), params["per_definition_cap"].get<int64_t>(), seed);
    }
    std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
      return std::tie(a.experiment_id, a.trajectory_id, a.turn) <
             std::tie(b.experiment_id, b.trajectory_id, b.turn);
    });
    for (Row& r : rows) {
      ++out.counts["definition"][r.definition];
      ++out.counts["status"][r.status];
      ++out.counts["turn"][absl::StrCat(r.turn)];
      ++out.counts["prompt_tag"][r.prompt_tag];
      out.rows.push_back(std::move(r));
    }
  }
  return out;
}

std::string SelectionJsonl(const Selection& s) {
  std::string out;
  for (const Row& r : s.rows) {
    absl::StrAppend(&out,
                    nlohmann::json{{"experiment_id", r.experiment_id},
                                   {"trajectory_id", r.trajectory_id},
                                   {"definition", r.definition},
                                   {"prompt_tag", r.prompt_tag},
                                   {"turn", r.turn},
                                   {"status", r.status},
                                   {"speedup", r.speedup},
                                   {"kernel_sha256", r.kernel_sha256},
                                   {"hopper", r.hopper},
                                   {"hopper_from", r.hopper_from}}
                        .dump(),
                    "\n");
  }
  return out;
}

nlohmann::json SelectionCounts(const Selection& s) {
  nlohmann::json counts = {{"candidates", s.candidates},
                           {"matched", s.matched},
                           {"kept", s.rows.size()}};
  for (const auto& [by, values] : s.counts) counts[absl::StrCat("by_", by)] = values;
  return counts;
}

}  // namespace ptxbench::pipelines
