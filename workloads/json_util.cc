#include "workloads/json_util.h"

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ptxbench::workloads {
namespace {

constexpr size_t kMaxValueChars = 80;

template <typename Json>
std::string RenderValue(const Json& value) {
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > kMaxValueChars) {
    text.resize(kMaxValueChars);
    text += "...";
  }
  return text;
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

// Tracks where the parser is, to name a duplicated key by its field path.
struct Frame {
  bool is_object = false;
  std::set<std::string> keys;
  std::string key;
  size_t index = 0;
};

std::string PathOf(const std::vector<Frame>& stack) {
  std::string path;
  for (const Frame& frame : stack) {
    path = frame.is_object ? JoinField(path, frame.key) : IndexField(path, frame.index);
  }
  return path;
}

template <typename Json>
absl::StatusOr<Json> ParseStrict(absl::string_view text, absl::string_view origin) {
  std::vector<Frame> stack;
  std::vector<Frame> duplicate_at;  // the stack when a key repeated
  auto track = [&](int /*depth*/, nlohmann::json::parse_event_t event,
                   Json& parsed) -> bool {
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
    TextPosition pos = PositionOf(text, e.byte == 0 ? 0 : e.byte - 1);
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: line %d, column %d: malformed JSON: %s", origin, pos.line,
                        pos.column, ExplainParseError(e.what())));
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
    return FieldError(origin, PathOf(duplicate_at), RenderValue(*value),
                      "key given more than once in the same object");
  }
  return result;
}

}  // namespace

TextPosition PositionOf(absl::string_view text, size_t offset) {
  TextPosition pos;
  const size_t end = offset < text.size() ? offset : text.size();
  size_t line_start = 0;
  for (size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++pos.line;
      line_start = i + 1;
    }
  }
  pos.column = static_cast<int64_t>(end - line_start) + 1;
  return pos;
}

absl::Status FieldError(absl::string_view origin, absl::string_view field,
                        absl::string_view value, absl::string_view problem) {
  return absl::InvalidArgumentError(
      absl::StrCat(origin, ": field \"", field, "\": value ", value, ": ", problem));
}

std::string ValueForError(const nlohmann::json& value) { return RenderValue(value); }
std::string ValueForError(const nlohmann::ordered_json& value) {
  return RenderValue(value);
}

absl::StatusOr<nlohmann::json> ParseStrictJson(absl::string_view text,
                                               absl::string_view origin) {
  return ParseStrict<nlohmann::json>(text, origin);
}

absl::StatusOr<nlohmann::ordered_json> ParseStrictOrderedJson(absl::string_view text,
                                                              absl::string_view origin) {
  return ParseStrict<nlohmann::ordered_json>(text, origin);
}

std::string JoinField(absl::string_view parent, absl::string_view key) {
  return parent.empty() ? std::string(key) : absl::StrCat(parent, ".", key);
}

std::string IndexField(absl::string_view parent, size_t index) {
  return absl::StrCat(parent, "[", index, "]");
}

}  // namespace ptxbench::workloads
