#ifndef PTXBENCH_RESULTS_EXPORTS_FILE_SINK_H_
#define PTXBENCH_RESULTS_EXPORTS_FILE_SINK_H_

// A file written front to back through one large buffer: callers append
// rows to buffer() and the bytes reach the file in writes of about 1 MiB,
// never one per row, so an export's speed is bound by formatting, not by
// system calls. It can also hash what it writes (SHA-256) for manifests,
// without reading the file back. The first error sticks: later appends are
// dropped and Close() (or status()) reports it, so a row writer checks once
// per trajectory instead of once per field. Not thread-safe.

#include <openssl/evp.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxbench::exports {

class FileSink {
 public:
  // Creates (or truncates) `path`. kInternal naming it when it cannot.
  static absl::StatusOr<std::unique_ptr<FileSink>> Create(const std::string& path,
                                                          bool hash = false);
  ~FileSink();  // closes the file; unflushed bytes are lost unless Close() ran
  FileSink(const FileSink&) = delete;
  FileSink& operator=(const FileSink&) = delete;

  // Append here, then call Appended().
  std::string& buffer() { return buffer_; }
  void Appended() {
    if (buffer_.size() >= kFlushBytes) Flush();
  }
  void Append(absl::string_view text) {
    buffer_.append(text.data(), text.size());
    Appended();
  }

  // The first error so far (or OK).
  const absl::Status& status() const { return status_; }
  // Writes what is buffered and closes the file. Once.
  absl::Status Close();

  const std::string& path() const { return path_; }
  // Bytes written (after Close: the file's size).
  int64_t size() const { return written_; }
  // Lower-case hex SHA-256 of everything written; after Close, when hashing.
  const std::string& sha256() const { return sha256_; }

 private:
  static constexpr size_t kFlushBytes = 1 << 20;

  FileSink(std::string path, int fd, EVP_MD_CTX* hash);
  void Flush();

  const std::string path_;
  int fd_;
  EVP_MD_CTX* hash_;  // owned; null when not hashing
  std::string buffer_;
  int64_t written_ = 0;
  absl::Status status_;
  std::string sha256_;
};

}  // namespace ptxbench::exports

#endif  // PTXBENCH_RESULTS_EXPORTS_FILE_SINK_H_
