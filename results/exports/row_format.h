#ifndef PTXBENCH_RESULTS_EXPORTS_ROW_FORMAT_H_
#define PTXBENCH_RESULTS_EXPORTS_ROW_FORMAT_H_

// One table written row by row, as CSV (RFC 4180: a header row, commas,
// fields quoted only when they must be) or as JSON Lines (one object per
// row, keys in column order). The writer of a row names no columns: it calls
// one value method per column, in the order the table was made with, and
// the format decides the spelling:
//   value            csv                    jsonl
//   Null()           empty field            null
//   Double(NaN/±inf) NaN / inf / -inf       null
//   Bool             true / false           true / false
//   Axes             "M=8192;N=7168"        {"M": 8192, "N": 7168}
//   StringList       joined with " | "      ["a", "b"]
// A row with too few or too many values is a programming error, reported
// by status() (kInternal). Not thread-safe.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/map.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "results/exports/file_sink.h"

namespace ptxbench::exports {

class RowFormat {
 public:
  // Writes rows of `columns` into `sink`, which it owns and closes.
  static std::unique_ptr<RowFormat> Csv(std::unique_ptr<FileSink> sink,
                                        std::vector<std::string> columns);
  static std::unique_ptr<RowFormat> Jsonl(std::unique_ptr<FileSink> sink,
                                          std::vector<std::string> columns);
  virtual ~RowFormat() = default;

  virtual void String(absl::string_view value) = 0;
  // Null() when empty.
  void OptionalString(absl::string_view value) {
    if (value.empty()) {
      Null();
    } else {
      String(value);
    }
  }
  virtual void Int(int64_t value) = 0;
  virtual void Double(double value) = 0;
  virtual void Bool(bool value) = 0;
  virtual void Null() = 0;
  virtual void Axes(const google::protobuf::Map<std::string, int64_t>& axes) = 0;
  virtual void StringList(const google::protobuf::RepeatedPtrField<std::string>& values) = 0;
  // Ends the row; the next value starts the next one.
  void EndRow();

  int64_t rows() const { return rows_; }
  // The file's first error, or a row of the wrong length.
  absl::Status status() const;
  absl::Status Close();

 protected:
  RowFormat(std::unique_ptr<FileSink> sink, std::vector<std::string> columns)
      : sink_(std::move(sink)), columns_(std::move(columns)) {}

  // The buffer to append the next value to (with its separator).
  std::string& Next() { return sink_->buffer(); }
  virtual void FinishRow() = 0;

  std::unique_ptr<FileSink> sink_;
  const std::vector<std::string> columns_;
  size_t column_ = 0;  // the index of the next value in the row

 private:
  int64_t rows_ = 0;
  absl::Status shape_;
};

}  // namespace ptxbench::exports

#endif  // PTXBENCH_RESULTS_EXPORTS_ROW_FORMAT_H_
