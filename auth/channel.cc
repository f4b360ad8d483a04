#include "auth/channel.h"

#include <filesystem>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "auth/token.h"
#include "auth/pem.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/client_interceptor.h"

namespace ptxbench::auth {
namespace {

// Adds the authorization header to the initial metadata of every call.
class BearerInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit BearerInterceptor(const std::string* header) : header_(header) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->insert({kAuthorizationKey, *header_});
    }
    methods->Proceed();
  }

 private:
  const std::string* header_;
};

class BearerInterceptorFactory final
    : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit BearerInterceptorFactory(const std::string& token)
      : header_(absl::StrCat(kBearer, token)) {}

  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo*) override {
    return new BearerInterceptor(&header_);
  }

 private:
  // Lives as long as the channel, which owns this factory.
  const std::string header_;
};

}  // namespace

absl::StatusOr<ChannelSecurity> LoadChannelSecurity(const ChannelSecuritySources& sources) {
  ChannelSecurity security;
  if (!sources.token_file.empty()) {
    absl::StatusOr<std::string> token = ReadTokenFile(sources.token_file);
    if (!token.ok()) return token.status();
    security.token = *std::move(token);
  } else if (!sources.token_env.empty()) {
    if (!LooksLikeToken(sources.token_env)) {
      return absl::InvalidArgumentError(
          absl::StrCat("$", kTokenEnvironment, " does not hold a ptxbench token (ptxb_…)"));
    }
    security.token = sources.token_env;
  } else if (!sources.fallback_token_file.empty() &&
             std::filesystem::exists(sources.fallback_token_file)) {
    absl::StatusOr<std::string> token = ReadTokenFile(sources.fallback_token_file);
    if (!token.ok()) return token.status();
    security.token = *std::move(token);
  }
  absl::StatusOr<std::string> ca = ReadPemFile("tls-ca", sources.ca_file);
  absl::StatusOr<std::string> cert = ReadPemFile("tls-cert", sources.cert_file);
  absl::StatusOr<std::string> key = ReadPemFile("tls-key", sources.key_file);
  for (const auto* pem : {&ca, &cert, &key}) {
    if (!pem->ok()) return pem->status();
  }
  if (cert->empty() != key->empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together: give both or neither");
  }
  if (!cert->empty() && ca->empty()) {
    return absl::InvalidArgumentError(
        "--tls-cert needs --tls-ca: a client certificate is only sent over TLS");
  }
  security.ca_pem = *std::move(ca);
  security.cert_pem = *std::move(cert);
  security.key_pem = *std::move(key);
  return security;
}

std::shared_ptr<grpc::Channel> NewChannel(const std::string& address,
                                          const ChannelSecurity& security,
                                          grpc::ChannelArguments args) {
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (security.tls()) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = security.ca_pem;
    ssl.pem_cert_chain = security.cert_pem;
    ssl.pem_private_key = security.key_pem;
    credentials = grpc::SslCredentials(ssl);
  }
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> interceptors;
  if (!security.token.empty()) {
    interceptors.push_back(std::make_unique<BearerInterceptorFactory>(security.token));
  }
  return grpc::experimental::CreateCustomChannelWithInterceptors(address, credentials, args,
                                                                 std::move(interceptors));
}

}  // namespace ptxbench::auth
