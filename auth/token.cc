#include "auth/token.h"

#include <sys/random.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/file.h"
#include "common/hash.h"

namespace ptxbench::auth {

namespace v1 = ::ptxbench::v1;

namespace {

constexpr size_t kRandomBytes = 32;
constexpr size_t kEncodedLength = 43;  // base64url of 32 bytes, unpadded

constexpr v1::Role kRoles[] = {v1::ROLE_ADMIN, v1::ROLE_SUBMIT, v1::ROLE_READ, v1::ROLE_WORKER,
                               v1::ROLE_GATEWAY};

}  // namespace

std::string GenerateToken() {
  unsigned char bytes[kRandomBytes];
  size_t filled = 0;
  while (filled < sizeof(bytes)) {
    ssize_t n = getrandom(bytes + filled, sizeof(bytes) - filled, 0);
    if (n < 0 && errno == EINTR) continue;
    // Without the kernel's random source there is no safe token to make.
    if (n < 0) std::abort();
    filled += static_cast<size_t>(n);
  }
  return absl::StrCat(kTokenPrefix, absl::WebSafeBase64Escape(absl::string_view(
                                        reinterpret_cast<const char*>(bytes), sizeof(bytes))));
}

std::string TokenHash(absl::string_view token) { return Sha256Hex(token); }

bool LooksLikeToken(absl::string_view text) {
  if (!absl::ConsumePrefix(&text, kTokenPrefix) || text.size() != kEncodedLength) return false;
  for (char c : text) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  }
  return true;
}

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat("cannot read token file ", path, ": ",
                                            std::strerror(errno)));
  }
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "token file ", path, " may be read by other users (mode ",
        absl::StrFormat("%03o", st.st_mode & 0777), "); make it private: chmod 600 ", path));
  }
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return absl::NotFoundError(absl::StrCat("cannot read token file ", path));
  std::string token(absl::StripAsciiWhitespace(*text));
  if (!LooksLikeToken(token)) {
    return absl::InvalidArgumentError(
        absl::StrCat("token file ", path, " does not hold a ptxbench token (ptxb_…)"));
  }
  return token;
}

absl::Status WriteTokenFile(const std::string& path, absl::string_view token) {
  // Created private (not chmod-ed after the fact): no other user can open
  // it at any moment. Written beside `path` and renamed into place.
  const std::string temporary = absl::StrCat(path, ".tmp-", getpid());
  const std::string text = absl::StrCat(token, "\n");
  int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  bool ok = fd >= 0 && fchmod(fd, 0600) == 0 &&
            write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
            fsync(fd) == 0;
  if (fd >= 0) ok = close(fd) == 0 && ok;
  if (ok && std::rename(temporary.c_str(), path.c_str()) == 0) return absl::OkStatus();
  const std::string why = std::strerror(errno);
  std::remove(temporary.c_str());
  return absl::InternalError(absl::StrCat("cannot write token file ", path, ": ", why));
}

std::string RoleName(v1::Role role) {
  switch (role) {
    case v1::ROLE_ADMIN:
      return "admin";
    case v1::ROLE_SUBMIT:
      return "submit";
    case v1::ROLE_READ:
      return "read";
    case v1::ROLE_WORKER:
      return "worker";
    case v1::ROLE_GATEWAY:
      return "gateway";
    default:
      return "unspecified";
  }
}

absl::StatusOr<v1::Role> ParseRole(absl::string_view name) {
  for (v1::Role role : kRoles) {
    if (RoleName(role) == name) return role;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown role '", name, "': one of ",
      absl::StrJoin(kRoles, ", ", [](std::string* out, v1::Role r) { out->append(RoleName(r)); })));
}

}  // namespace ptxbench::auth
