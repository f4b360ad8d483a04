#ifndef PTXBENCH_WORKLOADS_FIELD_READER_H_
#define PTXBENCH_WORKLOADS_FIELD_READER_H_

// Typed reads of one JSON document's fields (order-preserving JSON), each
// problem reported in json_util.h's one shape against the document's origin.

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "workloads/json_util.h"

namespace ptxbench::workloads {

// Reads fields of one JSON document and reports problems against `origin`.
class FieldReader {
 public:
  using Json = nlohmann::ordered_json;

  explicit FieldReader(absl::string_view origin) : origin_(origin) {}

  absl::Status Error(absl::string_view field, const Json& value,
                     absl::string_view problem) const {
    return FieldError(origin_, field, ValueForError(value), problem);
  }
  absl::Status Missing(absl::string_view field) const {
    return FieldError(origin_, field, "null", "required field is missing");
  }

  // The member `key` of `object` (at path `parent`), or nullptr when absent.
  static const Json* Member(const Json& object, absl::string_view key) {
    auto it = object.find(std::string(key));
    return it == object.end() ? nullptr : &*it;
  }

  absl::StatusOr<const Json*> Required(const Json& object, absl::string_view parent,
                                       absl::string_view key) const {
    const Json* value = Member(object, key);
    if (value == nullptr) return Missing(JoinField(parent, key));
    return value;
  }

  absl::StatusOr<std::string> String(const Json& value, absl::string_view field,
                                     bool allow_empty = false) const {
    if (!value.is_string()) return Error(field, value, "must be a string");
    std::string text = value.get<std::string>();
    if (!allow_empty && text.empty()) return Error(field, value, "must not be empty");
    return text;
  }

  absl::StatusOr<std::vector<std::string>> StringList(const Json& value,
                                                      absl::string_view field) const {
    if (!value.is_array()) return Error(field, value, "must be a list of strings");
    std::vector<std::string> out;
    for (size_t i = 0; i < value.size(); ++i) {
      PTXB_ASSIGN_OR_RETURN(std::string item, String(value[i], IndexField(field, i)));
      out.push_back(std::move(item));
    }
    return out;
  }

  absl::StatusOr<int64_t> Integer(const Json& value, absl::string_view field, int64_t min,
                                  int64_t max) const {
    if (!value.is_number_integer()) return Error(field, value, "must be an integer");
    if (value.is_number_unsigned() &&
        value.get<uint64_t>() > static_cast<uint64_t>(max)) {
      return Error(field, value, absl::StrCat("must be at most ", max));
    }
    int64_t v = value.get<int64_t>();
    if (v < min) return Error(field, value, absl::StrCat("must be at least ", min));
    if (v > max) return Error(field, value, absl::StrCat("must be at most ", max));
    return v;
  }

  absl::StatusOr<double> Number(const Json& value, absl::string_view field) const {
    if (!value.is_number()) return Error(field, value, "must be a number");
    return value.get<double>();
  }

  absl::Status RequireObject(const Json& value, absl::string_view field) const {
    if (!value.is_object()) return Error(field, value, "must be an object");
    return absl::OkStatus();
  }

 private:
  std::string origin_;
};

}  // namespace ptxbench::workloads

#endif  // PTXBENCH_WORKLOADS_FIELD_READER_H_
