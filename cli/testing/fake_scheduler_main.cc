// A stand-in for ptxbench-scheduler in the tests of `ptxbench up`: writes an
// admin token to --data-dir, as the real one does, and serves
// FakeClientService on --listen HOST:PORT until SIGTERM or SIGINT.

#include <signal.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include "auth/token.h"
#include "cli/testing/fake_client_service.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"

int main(int argc, char** argv) {
  std::string listen, data_dir;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--listen") == 0) listen = argv[i + 1];
    if (std::strcmp(argv[i], "--data-dir") == 0) data_dir = argv[i + 1];
  }
  if (!data_dir.empty()) {
    std::filesystem::create_directories(data_dir);
    const std::string path = data_dir + "/" + ptxbench::auth::kAdminTokenFile;
    if (!ptxbench::auth::WriteTokenFile(path, ptxbench::auth::GenerateToken()).ok()) {
      std::fprintf(stderr, "fake scheduler: cannot write %s\n", path.c_str());
      return 1;
    }
  }
  if (listen.empty()) {
    std::fprintf(stderr, "fake scheduler: --listen HOST:PORT is required\n");
    return 2;
  }
  // Block the stop signals before gRPC starts threads, then wait for them here.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  ptxbench::cli::fakes::FakeClientService service;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials());
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr) {
    std::fprintf(stderr, "fake scheduler: cannot listen on %s\n", listen.c_str());
    return 1;
  }
  std::printf("fake scheduler listening on %s\n", listen.c_str());
  std::fflush(stdout);
  int sig = 0;
  sigwait(&stop, &sig);
  std::printf("fake scheduler: signal %d, stopping\n", sig);
  server->Shutdown();
  return 0;
}
