#include "common/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace ptxbench {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

absl::StatusOr<std::string> ReadUntrustedFile(const std::string& path, size_t max) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer.
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ELOOP) {
      return absl::FailedPreconditionError(absl::StrCat(path, " is a symbolic link"));
    }
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat("there is no file ", path));
    return absl::FailedPreconditionError(absl::StrCat("cannot open ", path, ": ", strerror(errno)));
  }
  struct stat st {};
  std::string text;
  absl::Status status;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    status = absl::FailedPreconditionError(absl::StrCat(path, " is not a regular file"));
  } else if (static_cast<uint64_t>(st.st_size) > max) {
    status = absl::OutOfRangeError(absl::StrCat(path, " is larger than ", max, " bytes"));
  } else {
    text.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    for (ssize_t n; got < text.size() && (n = read(fd, text.data() + got, text.size() - got)) > 0;) {
      got += static_cast<size_t>(n);
    }
    text.resize(got);  // shorter if it shrank meanwhile
  }
  close(fd);
  if (!status.ok()) return status;
  return text;
}

absl::Status WriteFile(const std::string& path, absl::string_view content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view content) {
  const std::string temporary = absl::StrCat(path, ".tmp-", getpid());
  absl::Status written = WriteFile(temporary, content);
  if (written.ok() && std::rename(temporary.c_str(), path.c_str()) == 0) return written;
  std::remove(temporary.c_str());
  return absl::InternalError(absl::StrCat("cannot write ", path));
}

}  // namespace ptxbench
