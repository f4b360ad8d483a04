#include "common/hash.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace ptxbench {
namespace {

std::array<unsigned char, SHA256_DIGEST_LENGTH> Digest(absl::string_view data) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> out;
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(),
         out.data());
  return out;
}

}  // namespace

std::string Sha256Hex(absl::string_view data) {
  auto d = Digest(data);
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(d.data()), d.size()));
}

absl::StatusOr<std::string> Sha256FileHex(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    return absl::Status(e == ENOENT ? absl::StatusCode::kNotFound : absl::StatusCode::kInternal,
                        absl::StrCat("cannot read ", path, ": ", std::strerror(e)));
  }
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  bool ok = ctx != nullptr && EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) == 1;
  std::vector<char> buffer(1 << 20);
  ssize_t n = 0;
  while (ok && (n = read(fd, buffer.data(), buffer.size())) != 0) {
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0 && EVP_DigestUpdate(ctx.get(), buffer.data(), static_cast<size_t>(n)) == 1;
  }
  const int read_errno = errno;
  close(fd);
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest;
  unsigned int size = 0;
  if (!ok || EVP_DigestFinal_ex(ctx.get(), digest.data(), &size) != 1) {
    return absl::InternalError(absl::StrCat("cannot hash ", path, ": ",
                                            n < 0 ? std::strerror(read_errno) : "digest failed"));
  }
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(digest.data()), size));
}

uint64_t StableHash64(absl::string_view data) {
  auto d = Digest(data);
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | d[i];
  return v;
}

}  // namespace ptxbench
