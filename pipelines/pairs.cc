// The pairs stage (pairs.h).

#include "pipelines/pairs.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pipelines/jsonl.h"

namespace ptxbench::pipelines {

absl::StatusOr<std::vector<Item>> ReadItemsJsonl(absl::string_view text) {
  return internal::ReadJsonl<Item>(text, "items.jsonl", "a derived item",
                                   [](const nlohmann::json& j) {
                                     Item i;
                                     i.sample_index = j.at("sample_index").get<int>();
                                     i.experiment_id = j.at("experiment_id").get<std::string>();
                                     i.trajectory_id = j.at("trajectory_id").get<std::string>();
                                     i.definition = j.at("definition").get<std::string>();
                                     i.status = j.at("status").get<std::string>();
                                     i.turn = j.at("turn").get<int>();
                                     i.kernel_sha256 = j.at("kernel_sha256").get<std::string>();
                                     i.log_sha256 = j.at("log_sha256").get<std::string>();
                                     return i;
                                   });
}

Pairs MakePairs(const std::vector<Item>& items, const std::string& experiment_id,
                const std::vector<ptxbench::v1::Trajectory>& derived,
                const nlohmann::json& params) {
  std::map<int, const ptxbench::v1::Trajectory*> by_sample;
  for (const ptxbench::v1::Trajectory& t : derived) by_sample[t.summary().sample_index()] = &t;
  // The fixes a pair may use: correct, fast enough, Hopper where asked.
  nlohmann::json fixed_params = {{"rows", "correct"},
                                 {"min_speedup", params.value("min_speedup", 0.0)},
                                 {"arch_features", params.value("arch_features", "any")},
                                 {"accept_compiled", params.value("accept_compiled", "no")}};
  const bool every = params.value("which", "first") == "every";
  Pairs out;
  for (const Item& item : items) {
    ++out.items;
    auto t = by_sample.find(item.sample_index);
    if (t == by_sample.end()) continue;
    const Selection fixes = Select(RowsOf(experiment_id, *t->second), fixed_params);
    for (const Row& fix : fixes.rows) {
      out.pairs.push_back({item, fix});
      if (!every) break;
    }
    out.repaired += fixes.rows.empty() ? 0 : 1;
  }
  return out;
}

std::string PairsJsonl(const Pairs& p) {
  std::string out;
  for (const Pair& pair : p.pairs) {
    const Item& w = pair.wrong;
    const Row& f = pair.fixed;
    absl::StrAppend(&out,
                    nlohmann::json{{"definition", w.definition},
                                   {"wrong",
                                    {{"experiment_id", w.experiment_id},
                                     {"trajectory_id", w.trajectory_id},
                                     {"turn", w.turn},
                                     {"status", w.status},
                                     {"kernel_sha256", w.kernel_sha256},
                                     {"log_sha256", w.log_sha256}}},
                                   {"fixed",
                                    {{"experiment_id", f.experiment_id},
                                     {"status", f.status},
                                     {"trajectory_id", f.trajectory_id},
                                     {"turn", f.turn},
                                     {"speedup", f.speedup},
                                     {"kernel_sha256", f.kernel_sha256},
                                     {"hopper", f.hopper},
                                     {"hopper_from", f.hopper_from}}}}
                        .dump(),
                    "\n");
  }
  return out;
}

nlohmann::json PairsCounts(const Pairs& p) {
  return {{"items", p.items}, {"repaired", p.repaired}, {"pairs", p.pairs.size()}};
}

}  // namespace ptxbench::pipelines
