#include "common/file.h"

#include <unistd.h>

#include <cstdio>
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
