#include "common/hash.h"

#include <openssl/sha.h>

#include <array>

#include "absl/strings/escaping.h"

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

uint64_t StableHash64(absl::string_view data) {
  auto d = Digest(data);
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | d[i];
  return v;
}

}  // namespace ptxbench
