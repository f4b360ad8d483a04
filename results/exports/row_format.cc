#include "results/exports/row_format.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "results/exports/text.h"

namespace ptxbench::exports {
namespace {

// Axis values in name order (a proto map has no order of its own).
absl::InlinedVector<std::pair<absl::string_view, int64_t>, 8> SortedAxes(
    const google::protobuf::Map<std::string, int64_t>& axes) {
  absl::InlinedVector<std::pair<absl::string_view, int64_t>, 8> out;
  for (const auto& [name, value] : axes) out.emplace_back(name, value);
  std::sort(out.begin(), out.end());
  return out;
}

class CsvFormat : public RowFormat {
 public:
  CsvFormat(std::unique_ptr<FileSink> sink, std::vector<std::string> columns)
      : RowFormat(std::move(sink), std::move(columns)) {
    std::string& out = sink_->buffer();
    for (size_t i = 0; i < columns_.size(); ++i) {
      if (i > 0) out.push_back(',');
      AppendCsvField(&out, columns_[i]);
    }
    out.append("\r\n");
  }

  void String(absl::string_view value) override { AppendCsvField(&Field(), value); }
  void Int(int64_t value) override { absl::StrAppend(&Field(), value); }
  void Double(double value) override {
    std::string& out = Field();
    if (std::isnan(value)) {
      out.append("NaN");
    } else if (std::isinf(value)) {
      out.append(value > 0 ? "inf" : "-inf");
    } else {
      AppendDouble(&out, value);
    }
  }
  void Bool(bool value) override { Field().append(value ? "true" : "false"); }
  void Null() override { Field(); }
  void Axes(const google::protobuf::Map<std::string, int64_t>& axes) override {
    std::string text;
    for (const auto& [name, value] : SortedAxes(axes)) {
      if (!text.empty()) text.push_back(';');
      absl::StrAppend(&text, name, "=", value);
    }
    AppendCsvField(&Field(), text);
  }
  void StringList(const google::protobuf::RepeatedPtrField<std::string>& values) override {
    std::string text;
    for (const std::string& v : values) {
      if (!text.empty()) text.append(" | ");
      text.append(v);
    }
    AppendCsvField(&Field(), text);
  }

 private:
  std::string& Field() {
    std::string& out = Next();
    if (column_++ > 0) out.push_back(',');
    return out;
  }
  void FinishRow() override { Next().append("\r\n"); }
};

class JsonlFormat : public RowFormat {
 public:
  JsonlFormat(std::unique_ptr<FileSink> sink, std::vector<std::string> columns)
      : RowFormat(std::move(sink), std::move(columns)) {
    for (const std::string& name : columns_) {
      std::string key;
      AppendJsonString(&key, name);
      key.push_back(':');
      keys_.push_back(std::move(key));
    }
  }

  void String(absl::string_view value) override { AppendJsonString(&Field(), value); }
  void Int(int64_t value) override { absl::StrAppend(&Field(), value); }
  void Double(double value) override {
    std::string& out = Field();
    if (std::isfinite(value)) {
      AppendDouble(&out, value);
    } else {
      out.append("null");
    }
  }
  void Bool(bool value) override { Field().append(value ? "true" : "false"); }
  void Null() override { Field().append("null"); }
  void Axes(const google::protobuf::Map<std::string, int64_t>& axes) override {
    std::string& out = Field();
    out.push_back('{');
    bool first = true;
    for (const auto& [name, value] : SortedAxes(axes)) {
      if (!first) out.push_back(',');
      first = false;
      AppendJsonString(&out, name);
      out.push_back(':');
      absl::StrAppend(&out, value);
    }
    out.push_back('}');
  }
  void StringList(const google::protobuf::RepeatedPtrField<std::string>& values) override {
    std::string& out = Field();
    out.push_back('[');
    for (int i = 0; i < values.size(); ++i) {
      if (i > 0) out.push_back(',');
      AppendJsonString(&out, values[i]);
    }
    out.push_back(']');
  }

 private:
  std::string& Field() {
    std::string& out = Next();
    out.push_back(column_ == 0 ? '{' : ',');
    if (column_ < keys_.size()) out.append(keys_[column_]);
    ++column_;
    return out;
  }
  void FinishRow() override {
    std::string& out = Next();
    if (column_ == 0) out.push_back('{');
    out.append("}\n");
  }

  std::vector<std::string> keys_;  // "\"name\":" per column
};

}  // namespace

std::unique_ptr<RowFormat> RowFormat::Csv(std::unique_ptr<FileSink> sink,
                                          std::vector<std::string> columns) {
  return std::make_unique<CsvFormat>(std::move(sink), std::move(columns));
}

std::unique_ptr<RowFormat> RowFormat::Jsonl(std::unique_ptr<FileSink> sink,
                                            std::vector<std::string> columns) {
  return std::make_unique<JsonlFormat>(std::move(sink), std::move(columns));
}

void RowFormat::EndRow() {
  if (column_ != columns_.size() && shape_.ok()) {
    shape_ = absl::InternalError(absl::StrCat(sink_->path(), ": row ", rows_ + 1, " has ", column_,
                                              " values for ", columns_.size(), " columns"));
  }
  FinishRow();
  column_ = 0;
  ++rows_;
  sink_->Appended();
}

absl::Status RowFormat::status() const { return shape_.ok() ? sink_->status() : shape_; }

absl::Status RowFormat::Close() {
  absl::Status closed = sink_->Close();
  return shape_.ok() ? closed : shape_;
}

}  // namespace ptxbench::exports
