#include "results/exports/file_sink.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace ptxbench::exports {

absl::StatusOr<std::unique_ptr<FileSink>> FileSink::Create(const std::string& path, bool hash) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat("cannot create ", path, ": ", std::strerror(errno)));
  }
  EVP_MD_CTX* ctx = nullptr;
  if (hash) {
    ctx = EVP_MD_CTX_new();
    if (ctx == nullptr || EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) != 1) {
      EVP_MD_CTX_free(ctx);
      ::close(fd);
      return absl::InternalError("cannot start a SHA-256 digest");
    }
  }
  return std::unique_ptr<FileSink>(new FileSink(path, fd, ctx));
}

FileSink::FileSink(std::string path, int fd, EVP_MD_CTX* hash)
    : path_(std::move(path)), fd_(fd), hash_(hash) {
  buffer_.reserve(kFlushBytes + (kFlushBytes >> 2));
}

FileSink::~FileSink() {
  if (fd_ >= 0) ::close(fd_);
  EVP_MD_CTX_free(hash_);
}

void FileSink::Flush() {
  if (!status_.ok() || fd_ < 0) {
    buffer_.clear();
    return;
  }
  if (hash_ != nullptr && EVP_DigestUpdate(hash_, buffer_.data(), buffer_.size()) != 1) {
    status_ = absl::InternalError(absl::StrCat("cannot hash ", path_));
  }
  const char* data = buffer_.data();
  size_t left = buffer_.size();
  while (left > 0 && status_.ok()) {
    const ssize_t n = ::write(fd_, data, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      status_ = absl::InternalError(absl::StrCat("cannot write ", path_, ": ", std::strerror(errno)));
      break;
    }
    data += n;
    left -= static_cast<size_t>(n);
    written_ += n;
  }
  buffer_.clear();
}

absl::Status FileSink::Close() {
  if (fd_ < 0) {
    return status_.ok() ? absl::FailedPreconditionError(absl::StrCat(path_, " is closed already"))
                        : status_;
  }
  Flush();
  if (::close(fd_) != 0 && status_.ok()) {
    status_ = absl::InternalError(absl::StrCat("cannot close ", path_, ": ", std::strerror(errno)));
  }
  fd_ = -1;
  if (hash_ != nullptr && status_.ok()) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (EVP_DigestFinal_ex(hash_, digest, &length) != 1) {
      status_ = absl::InternalError(absl::StrCat("cannot hash ", path_));
    } else {
      sha256_ = absl::BytesToHexString(
          absl::string_view(reinterpret_cast<const char*>(digest), length));
    }
  }
  return status_;
}

}  // namespace ptxbench::exports
