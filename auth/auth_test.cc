#include <sys/stat.h>

#include <filesystem>
#include <set>

#include "absl/strings/str_cat.h"
#include "auth/authenticator.h"
#include "auth/channel.h"
#include "auth/server.h"
#include "auth/token.h"
#include "common/file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxbench::auth {
namespace {

namespace v1 = ::ptxbench::v1;
using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) / name).string();
}

TEST(TokenTest, TokensAreWellFormedAndDistinct) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    std::string token = GenerateToken();
    EXPECT_TRUE(LooksLikeToken(token)) << token;
    EXPECT_EQ(token.size(), 48u);
    seen.insert(token);
  }
  EXPECT_EQ(seen.size(), 100u);
  EXPECT_FALSE(LooksLikeToken("ptxb_short"));
  EXPECT_FALSE(LooksLikeToken(absl::StrCat("xxxx_", GenerateToken().substr(5))));
  std::string bad = GenerateToken();
  bad[10] = '!';
  EXPECT_FALSE(LooksLikeToken(bad));
}

TEST(TokenTest, HashIsSha256HexAndNotTheToken) {
  std::string token = GenerateToken();
  std::string hash = TokenHash(token);
  EXPECT_EQ(hash.size(), 64u);
  EXPECT_EQ(hash, TokenHash(token));
  EXPECT_NE(hash, TokenHash(GenerateToken()));
  EXPECT_EQ(hash.find(token.substr(5, 10)), std::string::npos);
}

TEST(TokenTest, TokenFileIsPrivateAndReadBack) {
  const std::string path = TempPath("token");
  std::string token = GenerateToken();
  ASSERT_TRUE(WriteTokenFile(path, token).ok());
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  absl::StatusOr<std::string> read = ReadTokenFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, token);

  chmod(path.c_str(), 0644);
  read = ReadTokenFile(path);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(read.status().message(), HasSubstr("chmod 600"));
  EXPECT_THAT(read.status().message(), ::testing::Not(HasSubstr(token)));

  ASSERT_TRUE(WriteFile(path, "not a token\n").ok());
  chmod(path.c_str(), 0600);
  EXPECT_EQ(ReadTokenFile(path).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadTokenFile(TempPath("missing")).status().code(), absl::StatusCode::kNotFound);
}

TEST(TokenTest, RolesRoundTrip) {
  for (v1::Role role : {v1::ROLE_ADMIN, v1::ROLE_SUBMIT, v1::ROLE_READ, v1::ROLE_WORKER,
                        v1::ROLE_GATEWAY}) {
    absl::StatusOr<v1::Role> parsed = ParseRole(RoleName(role));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, role);
  }
  absl::StatusOr<v1::Role> bad = ParseRole("root");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("admin, submit, read, worker, gateway"));
}

std::multimap<grpc::string_ref, grpc::string_ref> Metadata(const std::string& key,
                                                           const std::string& value) {
  return {{grpc::string_ref(key), grpc::string_ref(value)}};
}

TEST(AuthenticatorTest, FindsTokensByHashAndForgetsRemovedOnes) {
  Authenticator auth;
  const std::string token = GenerateToken();
  auth.Add(TokenHash(token), {"alice", v1::ROLE_READ});
  const std::string header = absl::StrCat("Bearer ", token);
  absl::StatusOr<Principal> who = auth.Authenticate(Metadata("authorization", header));
  ASSERT_TRUE(who.ok()) << who.status();
  EXPECT_EQ(who->name, "alice");
  EXPECT_EQ(who->role, v1::ROLE_READ);

  // A name holds one token: adding another under it retires the first.
  const std::string replacement = GenerateToken();
  auth.Add(TokenHash(replacement), {"alice", v1::ROLE_SUBMIT});
  EXPECT_EQ(auth.AuthenticateToken(token).status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(auth.AuthenticateToken(replacement)->role, v1::ROLE_SUBMIT);

  auth.Remove("alice");
  EXPECT_EQ(auth.AuthenticateToken(replacement).status().code(),
            absl::StatusCode::kUnauthenticated);
}

TEST(AuthenticatorTest, RefusalsSayWhyWithoutEchoingTheToken) {
  Authenticator auth;
  absl::StatusOr<Principal> none = auth.Authenticate({});
  EXPECT_EQ(none.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(none.status().message(), HasSubstr("--token-file"));

  const std::string token = GenerateToken();
  absl::StatusOr<Principal> basic = auth.Authenticate(Metadata("authorization", "Basic abc"));
  EXPECT_EQ(basic.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(basic.status().message(), HasSubstr("Bearer"));

  absl::StatusOr<Principal> unknown =
      auth.Authenticate(Metadata("authorization", absl::StrCat("Bearer ", token)));
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(unknown.status().message(), ::testing::Not(HasSubstr(token.substr(5))));
}

TEST(ListenTest, LoopbackAddresses) {
  for (const char* address : {"127.0.0.1:50051", "127.1.2.3:0", "[::1]:50051", "localhost:80",
                              "LOCALHOST:1", "unix:/tmp/s"}) {
    EXPECT_TRUE(IsLoopbackAddress(address)) << address;
  }
  for (const char* address : {"0.0.0.0:50051", ":50051", "10.0.0.5:50051", "[::]:50051",
                              "example.org:443", "128.0.0.1:1"}) {
    EXPECT_FALSE(IsLoopbackAddress(address)) << address;
  }
}

TEST(ListenTest, PlaintextOffLoopbackNeedsInsecure) {
  EXPECT_TRUE(CheckListenAddress("the API", "127.0.0.1:1", false, false).ok());
  EXPECT_TRUE(CheckListenAddress("the API", "0.0.0.0:1", true, false).ok());
  EXPECT_TRUE(CheckListenAddress("the API", "0.0.0.0:1", false, true).ok());
  absl::Status refused = CheckListenAddress("the API", "0.0.0.0:1", false, false);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr("--insecure"));
  EXPECT_THAT(refused.message(), HasSubstr("0.0.0.0:1"));
}

TEST(ListenTest, StatusPagesBindLoopbackUnlessAHostIsGiven) {
  EXPECT_EQ(LoopbackByDefault("9100"), "127.0.0.1:9100");
  EXPECT_EQ(LoopbackByDefault(":9100"), "127.0.0.1:9100");
  EXPECT_EQ(LoopbackByDefault("0.0.0.0:9100"), "0.0.0.0:9100");
}

TEST(TlsFilesTest, FlagsGoTogether) {
  EXPECT_EQ(LoadServerTls({"cert.pem", "", ""}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(LoadServerTls({"", "", "ca.pem"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(LoadServerTls({})->tls());
  const std::string not_pem = TempPath("not.pem");
  ASSERT_TRUE(WriteFile(not_pem, "hello").ok());
  absl::StatusOr<ServerTls> bad = LoadServerTls({not_pem, not_pem, ""});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("--tls-cert"));
  EXPECT_EQ(LoadServerTls({TempPath("none.pem"), not_pem, ""}).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(ChannelSecurityTest, TokenComesFromFileThenEnvironmentThenFallback) {
  const std::string file_token = GenerateToken(), env_token = GenerateToken(),
                    fallback_token = GenerateToken();
  const std::string file = TempPath("file.token"), fallback = TempPath("admin.token");
  ASSERT_TRUE(WriteTokenFile(file, file_token).ok());
  ASSERT_TRUE(WriteTokenFile(fallback, fallback_token).ok());

  ChannelSecuritySources sources{file, env_token, fallback, "", "", ""};
  EXPECT_EQ(LoadChannelSecurity(sources)->token, file_token);
  sources.token_file.clear();
  EXPECT_EQ(LoadChannelSecurity(sources)->token, env_token);
  sources.token_env.clear();
  EXPECT_EQ(LoadChannelSecurity(sources)->token, fallback_token);
  sources.fallback_token_file = TempPath("absent.token");
  EXPECT_EQ(LoadChannelSecurity(sources)->token, "");

  sources.token_env = "not-a-token";
  EXPECT_EQ(LoadChannelSecurity(sources).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ChannelSecurityTest, ClientCertificateNeedsKeyAndCa) {
  const std::string pem = TempPath("x.pem");
  ASSERT_TRUE(WriteFile(pem, "-----BEGIN CERTIFICATE-----\n").ok());
  ChannelSecuritySources sources;
  sources.cert_file = pem;
  EXPECT_EQ(LoadChannelSecurity(sources).status().code(), absl::StatusCode::kInvalidArgument);
  sources.key_file = pem;
  EXPECT_EQ(LoadChannelSecurity(sources).status().code(), absl::StatusCode::kInvalidArgument);
  sources.ca_file = pem;
  absl::StatusOr<ChannelSecurity> ok = LoadChannelSecurity(sources);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE(ok->tls());
}

}  // namespace
}  // namespace ptxbench::auth
