#include "auth/server.h"

#include <arpa/inet.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "auth/pem.h"
#include "grpcpp/security/server_credentials.h"

namespace ptxbench::auth {
namespace {

// The host part of HOST:PORT or [HOST]:PORT.
absl::string_view HostOf(absl::string_view address) {
  size_t colon = address.rfind(':');
  absl::string_view host = colon == absl::string_view::npos ? address : address.substr(0, colon);
  if (absl::StartsWith(host, "[") && absl::EndsWith(host, "]")) {
    host = host.substr(1, host.size() - 2);
  }
  return host;
}

}  // namespace

absl::StatusOr<ServerTls> LoadServerTls(const ServerTlsFiles& files) {
  if (files.cert.empty() != files.key.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together: give both or neither");
  }
  if (!files.client_ca.empty() && files.cert.empty()) {
    return absl::InvalidArgumentError("--tls-client-ca needs --tls-cert and --tls-key");
  }
  ServerTls tls;
  absl::StatusOr<std::string> cert = ReadPemFile("tls-cert", files.cert);
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadPemFile("tls-key", files.key);
  if (!key.ok()) return key.status();
  absl::StatusOr<std::string> ca = ReadPemFile("tls-client-ca", files.client_ca);
  if (!ca.ok()) return ca.status();
  tls.cert_pem = *std::move(cert);
  tls.key_pem = *std::move(key);
  tls.client_ca_pem = *std::move(ca);
  return tls;
}

std::shared_ptr<grpc::ServerCredentials> ServerCredentials(const ServerTls& tls) {
  if (!tls.tls()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(
      tls.client_ca_pem.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = tls.client_ca_pem;
  options.pem_key_cert_pairs.push_back({tls.key_pem, tls.cert_pem});
  return grpc::SslServerCredentials(options);
}

bool IsLoopbackAddress(absl::string_view address) {
  if (absl::StartsWith(address, "unix:") || absl::StartsWith(address, "unix-abstract:")) {
    return true;
  }
  absl::string_view host = HostOf(address);
  if (absl::AsciiStrToLower(host) == "localhost") return true;
  in_addr v4;
  if (inet_pton(AF_INET, std::string(host).c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;  // 127.0.0.0/8
  }
  in6_addr v6;
  if (inet_pton(AF_INET6, std::string(host).c_str(), &v6) == 1) {
    return IN6_IS_ADDR_LOOPBACK(&v6);
  }
  return false;
}

absl::Status CheckListenAddress(absl::string_view what, absl::string_view address, bool tls,
                                bool insecure) {
  if (tls || insecure || IsLoopbackAddress(address)) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "refusing to serve ", what, " on ", address,
      " without TLS: anyone on the network could read tokens, prompts and results. Give "
      "--tls-cert and --tls-key, listen on 127.0.0.1, or pass --insecure on a network you "
      "trust"));
}

std::string LoopbackByDefault(absl::string_view address) {
  int port = 0;
  if (absl::SimpleAtoi(address, &port)) return absl::StrCat("127.0.0.1:", address);
  if (absl::StartsWith(address, ":")) return absl::StrCat("127.0.0.1", address);
  return std::string(address);
}

}  // namespace ptxbench::auth
