#include "common/json_reader.h"

#include <algorithm>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace ptxbench {
namespace {

constexpr size_t kMaxValueChars = 80;

// 1-based line and column of the character at 0-based `offset` (an offset
// past the end names the end of the text).
std::pair<int64_t, int64_t> PositionOf(absl::string_view text, size_t offset) {
  const size_t end = std::min(offset, text.size());
  int64_t line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return {line, static_cast<int64_t>(end - line_start) + 1};
}

// nlohmann's what() reads "[json.exception.parse_error.101] parse error at
// line 1, column 5: syntax error ..."; keep only the part after the position,
// since the position is reported from the byte offset in our own format.
std::string ExplainParseError(const std::string& what) {
  std::string_view rest = what;
  if (size_t bracket = rest.find("] ");
      rest.starts_with("[json.exception") && bracket != std::string_view::npos) {
    rest.remove_prefix(bracket + 2);
  }
  if (rest.starts_with("parse error")) {
    if (size_t colon = rest.find(": "); colon != std::string_view::npos) {
      rest.remove_prefix(colon + 2);
    }
  }
  return std::string(rest);
}

// Where the parser is, to name a repeated key by its path.
struct Frame {
  bool is_object = false;
  std::set<std::string> keys;
  std::string key;
  size_t index = 0;
};

std::string PathOf(const std::vector<Frame>& stack) {
  std::string path;
  for (const Frame& frame : stack) {
    path = frame.is_object ? JsonField(path, frame.key) : JsonIndex(path, frame.index);
  }
  return path;
}

bool IsPlainKey(absl::string_view key) {
  if (key.empty() || (!absl::ascii_isalpha(key[0]) && key[0] != '_')) return false;
  return std::all_of(key.begin(), key.end(),
                     [](char c) { return absl::ascii_isalnum(c) || c == '_' || c == '-'; });
}

// "an integer from 1 to 1000", "a positive integer", ...
std::string DescribeInteger(int64_t min, int64_t max) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  if (max == kMax && min == 1) return "a positive integer";
  if (max == kMax && min == 0) return "a non-negative integer";
  if (max == kMax) return absl::StrCat("an integer of at least ", min);
  return absl::StrCat("an integer from ", min, " to ", max);
}

}  // namespace

absl::Status CheckJsonDepth(absl::string_view text, int max_depth, absl::string_view origin) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, whatever it is
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) {
        return absl::InvalidArgumentError(absl::StrCat(
            origin, ": nested more than ", max_depth, " levels deep (at byte ", i, ")"));
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<StrictJson> ParseStrictJson(absl::string_view text, absl::string_view origin) {
  using Json = StrictJson;
  std::vector<Frame> stack;
  std::vector<Frame> duplicate_at;  // the stack when a key repeated
  auto track = [&](int /*depth*/, nlohmann::json::parse_event_t event, Json& parsed) -> bool {
    using Event = nlohmann::json::parse_event_t;
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        stack.emplace_back();
        stack.back().is_object = event == Event::object_start;
        return true;
      case Event::key: {
        Frame& frame = stack.back();
        frame.key = parsed.template get<std::string>();
        if (!frame.keys.insert(frame.key).second && duplicate_at.empty()) {
          duplicate_at = stack;
        }
        return true;
      }
      case Event::object_end:
      case Event::array_end:
        stack.pop_back();
        break;
      case Event::value:
        break;
    }
    // A value (or a container) ended: advance the enclosing array.
    if (!stack.empty() && !stack.back().is_object) ++stack.back().index;
    return true;
  };
  Json result;
  try {
    result = Json::parse(text.begin(), text.end(), track);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is the 1-based index of the last character read.
    const auto [line, column] = PositionOf(text, e.byte == 0 ? 0 : e.byte - 1);
    return absl::InvalidArgumentError(absl::StrFormat("%s: line %d, column %d: malformed JSON: %s",
                                                      origin, line, column,
                                                      ExplainParseError(e.what())));
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": malformed JSON: ", ExplainParseError(e.what())));
  }
  if (!duplicate_at.empty()) {
    // The parser kept the last of the repeated values; show that one.
    const Json* value = &result;
    for (const Frame& frame : duplicate_at) {
      value = frame.is_object ? &value->at(frame.key) : &value->at(frame.index);
    }
    return JsonReader(origin).Error(PathOf(duplicate_at), *value, "each key once per object",
                                    "the key is given more than once");
  }
  return result;
}

std::string JsonField(absl::string_view parent, absl::string_view key) {
  if (!IsPlainKey(key)) return absl::StrCat(parent, "[", StrictJson(std::string(key)).dump(), "]");
  return parent.empty() ? std::string(key) : absl::StrCat(parent, ".", key);
}

std::string JsonIndex(absl::string_view parent, size_t index) {
  return absl::StrCat(parent, "[", index, "]");
}

std::string JsonPath(absl::string_view path) {
  if (path.empty() || path.front() == '[') return absl::StrCat("$", path);
  return absl::StrCat("$.", path);
}

std::string JsonForError(const StrictJson& value) {
  std::string text = value.dump(-1, ' ', false, StrictJson::error_handler_t::replace);
  if (text.size() > kMaxValueChars) {
    text.resize(kMaxValueChars);
    text += "...";
  }
  return text;
}

absl::Status JsonReader::Error(absl::string_view path, const Json& found,
                               absl::string_view expected, absl::string_view why) const {
  return ErrorFound(path, JsonForError(found), expected, why);
}

absl::Status JsonReader::ErrorFound(absl::string_view path, absl::string_view found,
                                    absl::string_view expected, absl::string_view why) const {
  return absl::InvalidArgumentError(absl::StrCat(origin_, ": ", JsonPath(path), ": expected ",
                                                 expected, ", found ", found,
                                                 why.empty() ? "" : "; ", why));
}

absl::Status JsonReader::Missing(absl::string_view path, absl::string_view expected) const {
  return ErrorFound(path, "nothing", expected);
}

const JsonReader::Json* JsonReader::Member(const Json& object, absl::string_view key) {
  auto it = object.find(std::string(key));
  return it == object.end() ? nullptr : &*it;
}

absl::StatusOr<const JsonReader::Json*> JsonReader::Required(const Json& object,
                                                             absl::string_view parent,
                                                             absl::string_view key) const {
  const Json* value = Member(object, key);
  if (value == nullptr) return Missing(JsonField(parent, key), "a value (the key is required)");
  return value;
}

absl::Status JsonReader::CheckKeys(const Json& object, absl::string_view parent,
                                   const std::vector<std::string>& known,
                                   bool allow_comments) const {
  for (const auto& [key, value] : object.items()) {
    if (allow_comments && absl::StartsWith(key, "_")) continue;
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    return ErrorFound(
        JsonField(parent, key), "an unknown key",
        absl::StrCat("a known key (", absl::StrJoin(known, ", "),
                     allow_comments ? "; keys starting with '_' are comments" : "", ")"));
  }
  return absl::OkStatus();
}

absl::Status JsonReader::RequireObject(const Json& value, absl::string_view path) const {
  if (!value.is_object()) return Error(path, value, "an object");
  return absl::OkStatus();
}

absl::StatusOr<std::string> JsonReader::String(const Json& value, absl::string_view path,
                                               bool allow_empty) const {
  const char* expected = allow_empty ? "a string" : "a non-empty string";
  if (!value.is_string()) return Error(path, value, expected);
  std::string text = value.get<std::string>();
  if (!allow_empty && text.empty()) return Error(path, value, expected);
  return text;
}

absl::StatusOr<std::string> JsonReader::Enum(const Json& value, absl::string_view path,
                                             const std::vector<std::string>& allowed) const {
  const std::string expected = absl::StrCat("one of \"", absl::StrJoin(allowed, "\", \""), "\"");
  if (!value.is_string()) return Error(path, value, expected);
  std::string text = value.get<std::string>();
  if (std::find(allowed.begin(), allowed.end(), text) == allowed.end()) {
    return Error(path, value, expected);
  }
  return text;
}

absl::StatusOr<std::vector<std::string>> JsonReader::StringList(const Json& value,
                                                                absl::string_view path) const {
  if (!value.is_array()) return Error(path, value, "a list of strings");
  std::vector<std::string> out;
  for (size_t i = 0; i < value.size(); ++i) {
    absl::StatusOr<std::string> item = String(value[i], JsonIndex(path, i));
    if (!item.ok()) return item.status();
    out.push_back(*std::move(item));
  }
  return out;
}

absl::StatusOr<int64_t> JsonReader::Integer(const Json& value, absl::string_view path, int64_t min,
                                            int64_t max) const {
  const std::string expected = DescribeInteger(min, max);
  if (!value.is_number_integer()) return Error(path, value, expected);
  if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(max)) {
    return Error(path, value, expected);
  }
  const int64_t n = value.get<int64_t>();
  if (n < min || n > max) return Error(path, value, expected);
  return n;
}

absl::StatusOr<bool> JsonReader::Boolean(const Json& value, absl::string_view path) const {
  if (!value.is_boolean()) return Error(path, value, "true or false");
  return value.get<bool>();
}

absl::StatusOr<double> JsonReader::Number(const Json& value, absl::string_view path) const {
  if (!value.is_number()) return Error(path, value, "a number");
  return value.get<double>();
}

absl::StatusOr<double> JsonReader::NonNegativeNumber(const Json& value,
                                                     absl::string_view path) const {
  if (!value.is_number() || !(value.get<double>() >= 0)) {
    return Error(path, value, "a number of at least 0");
  }
  return value.get<double>();
}

}  // namespace ptxbench
