#include "results/exports/definitions.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ptxbench::exports {

namespace v1 = ::ptxbench::v1;

namespace {

bool SameDefinition(const v1::DefinitionDocument& a, const v1::DefinitionDocument& b) {
  if (!a.version().empty() && !b.version().empty()) return a.version() == b.version();
  return a.json() == b.json() &&
         std::equal(a.workload_lines().begin(), a.workload_lines().end(),
                    b.workload_lines().begin(), b.workload_lines().end());
}

}  // namespace

absl::StatusOr<std::vector<const DefinitionIndex::Entry*>> DefinitionIndex::Add(
    const std::vector<v1::DefinitionDocument>& documents) {
  std::vector<const Entry*> added;
  for (const v1::DefinitionDocument& doc : documents) {
    if (doc.name().empty()) return absl::InvalidArgumentError("a definition document without a name");
    if (const Entry* known = Find(doc.name())) {
      if (!SameDefinition(known->document, doc)) {
        return absl::FailedPreconditionError(absl::StrCat(
            "definition ", doc.name(), " differs between the experiments exported (version ",
            known->document.version(), " and ", doc.version(),
            "); export them into separate folders"));
      }
      continue;
    }
    Entry entry;
    entry.document = doc;
    for (int i = 0; i < doc.workload_lines_size(); ++i) {
      absl::StatusOr<workloads::WorkloadRecord> record = workloads::ParseWorkloadRecord(
          doc.workload_lines(i), absl::StrCat("definition ", doc.name(), ", workload line ", i + 1));
      if (!record.ok()) return record.status();
      const std::string uuid = record->workload.uuid;
      entry.workloads.emplace(uuid, std::move(record->workload));
    }
    auto [it, inserted] = entries_.emplace(doc.name(), std::move(entry));
    added.push_back(&it->second);
  }
  return added;
}

const DefinitionIndex::Entry* DefinitionIndex::Find(absl::string_view name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

const workloads::Workload* DefinitionIndex::FindWorkload(absl::string_view definition,
                                                         absl::string_view uuid) const {
  const Entry* entry = Find(definition);
  if (entry == nullptr) return nullptr;
  auto it = entry->workloads.find(uuid);
  return it == entry->workloads.end() ? nullptr : &it->second;
}

}  // namespace ptxbench::exports
