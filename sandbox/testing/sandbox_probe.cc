// sandbox_probe: what a hostile submission would try, one action per run,
// for the sandbox tests (sandbox_test.cc). Prints one line saying what
// happened; exits 0 when the action succeeded, 1 when it was refused.
//   sandbox_probe connect PORT          TCP connect to 127.0.0.1:PORT
//   sandbox_probe read PATH             print the file's first line
//   sandbox_probe write PATH            create PATH
//   sandbox_probe environ NEEDLE        scan /proc/*/environ for NEEDLE
//   sandbox_probe processes             count the entries of /proc
//   sandbox_probe linger MARKER         fork, setsid, fork: a grandchild
//                                       that sleeps with MARKER in its argv
//   sandbox_probe sleep SECONDS [MARKER]
//   sandbox_probe alloc MIB             allocate and touch MIB MiB, 8 at a time
//   sandbox_probe forkbomb              fork until refused, then sleep
//   sandbox_probe ptrace PID            PTRACE_ATTACH
//   sandbox_probe status                CapEff, NoNewPrivs, Seccomp, uid
//   sandbox_probe unshare               unshare a user namespace
//   sandbox_probe killall               SIGKILL its parent, PID 1 and kill(-1)
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

int Refused(const std::string& what) {
  std::printf("refused: %s: %s\n", what.c_str(), strerror(errno));
  return 1;
}

int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return Refused("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return Refused("connect");
  std::printf("connected\n");
  return 0;
}

int Environ(const std::string& needle) {
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return Refused("/proc");
  int found = 0;
  while (dirent* e = readdir(proc)) {
    std::ifstream in(std::string("/proc/") + e->d_name + "/environ");
    std::stringstream text;
    text << in.rdbuf();
    if (text.str().find(needle) != std::string::npos) ++found;
  }
  closedir(proc);
  std::printf("found %d\n", found);
  return found > 0 ? 0 : 1;
}

int Processes() {
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return Refused("/proc");
  int n = 0;
  while (dirent* e = readdir(proc)) n += atoi(e->d_name) > 0;
  closedir(proc);
  std::printf("processes %d\n", n);
  return 0;
}

int Status() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("CapEff", 0) == 0 || line.rfind("CapPrm", 0) == 0 ||
        line.rfind("NoNewPrivs", 0) == 0 || line.rfind("Seccomp:", 0) == 0 ||
        line.rfind("Uid", 0) == 0) {
      std::printf("%s\n", line.c_str());
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc < 2) return 2;
  const std::string action = argv[1];
  const std::string arg = argc > 2 ? argv[2] : "";
  if (action == "connect") return Connect(atoi(arg.c_str()));
  if (action == "read") {
    std::ifstream in(arg);
    std::string line;
    if (!in || !std::getline(in, line)) return Refused("read " + arg);
    std::printf("read: %s\n", line.c_str());
    return 0;
  }
  if (action == "write") {
    FILE* f = std::fopen(arg.c_str(), "w");
    if (f == nullptr) return Refused("write " + arg);
    std::fclose(f);
    std::printf("wrote %s\n", arg.c_str());
    return 0;
  }
  if (action == "environ") return Environ(arg);
  if (action == "processes") return Processes();
  if (action == "status") return Status();
  if (action == "linger") {
    if (fork() == 0) {
      setsid();
      if (fork() == 0) {
        execl(argv[0], argv[0], "sleep", "300", arg.c_str(), nullptr);
        _exit(1);
      }
      _exit(0);
    }
    sleep(1);
    std::printf("left a process behind\n");
    return 0;
  }
  if (action == "sleep") {
    sleep(static_cast<unsigned>(atoi(arg.c_str())));
    return 0;
  }
  if (action == "alloc") {
    std::vector<char*> blocks;
    for (int i = 0; i < atoi(arg.c_str()) / 8; ++i) {
      char* p = static_cast<char*>(malloc(8 << 20));
      if (p == nullptr) return Refused("malloc");
      memset(p, 1, 8 << 20);
      blocks.push_back(p);
    }
    std::printf("allocated\n");
    return 0;
  }
  if (action == "forkbomb") {
    int n = 0;
    while (n < 100000) {
      const pid_t pid = fork();
      if (pid < 0) break;
      if (pid == 0) {
        pause();
        _exit(0);
      }
      ++n;
    }
    std::printf("forked %d\n", n);
    sleep(30);
    return 0;
  }
  if (action == "ptrace") {
    if (ptrace(PTRACE_ATTACH, atoi(arg.c_str()), nullptr, nullptr) != 0) return Refused("ptrace");
    std::printf("attached\n");
    return 0;
  }
  if (action == "killall") {
    kill(getppid(), SIGKILL);
    kill(1, SIGKILL);
    kill(-1, SIGKILL);
    std::printf("survived (parent %d)\n", getppid());
    return 0;
  }
  if (action == "unshare") {
    if (unshare(CLONE_NEWUSER) != 0) return Refused("unshare");
    std::printf("unshared\n");
    return 0;
  }
  return 2;
}
