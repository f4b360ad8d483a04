// The payload of view_walk_test: run inside a sandbox (or a process's view)
// as the uid that view runs as, it walks every file it can read below the
// roots it is given and reports each that is a vendor library, by name and
// by content. Output, one line each:
//   VENDOR <path> <why>
//   walked <files> files (<readable> readable, <elf> ELF, <checked> read whole,
//     <big> too big to read whole) in <dirs> directories
// Exit 0 when it walked; 2 on bad arguments.
//
//   view_walker [--show=PATH]... ROOT...   (/proc, /sys and /dev are never walked)
// --show=PATH prints "SHOW <path> <bytes>" (-1 when it cannot be read): what
// a view must hold (an agent's toolkit headers and compilers).

#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "sandbox/vendor_library.h"
#include "worker/compile/gpu_image_scan.h"
#include "worker/compile/library_check.h"

namespace {

// Bounds, so that a huge view cannot stall the test.
constexpr long kMaxEntries = 4'000'000;
constexpr int kMaxDepth = 48;
// ELF files up to this size are read whole (mapped) for embedded images;
// past it only their headers and dynamic section are read.
constexpr off_t kMaxWholeRead = 512 << 20;

// Vendor families by what a file's name contains anywhere (the test's own
// list, wider than a prefix: it does not trust the rule it checks).
bool NameLooksVendor(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  if (!ptxbench::sandbox::IsLibraryFileName(lower)) return false;
  for (const char* family : {"cublas", "cudnn", "cufft", "curand", "cusolver", "cusparse",
                             "cutensor", "nvblas", "nccl", "nvshmem", "nvrtc", "nvjitlink",
                             "cupti", "nvjpeg", "cufile", "nvinfer", "cutlass", "libnpp"}) {
    if (absl::StrContains(lower, family)) return true;
  }
  return ptxbench::sandbox::IsVendorLibraryName(name);
}

// The DT_SONAME of an ELF64 image `data` (mapped), or "": read through the
// module scan's ElfView, which checks every offset against the bytes.
std::string Soname(absl::string_view data) {
  ptxbench::worker::WorkBudget budget(std::numeric_limits<uint64_t>::max());
  absl::StatusOr<ptxbench::worker::ElfView> elf = ptxbench::worker::ElfView::Parse(data, &budget);
  if (!elf.ok()) return "";
  for (const Elf64_Shdr& s : elf->sections()) {
    if (s.sh_type != SHT_DYNAMIC) continue;
    const absl::string_view dynamic = elf->SectionBytes(s);
    for (uint64_t off = 0; off + sizeof(Elf64_Dyn) <= dynamic.size(); off += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d;
      std::memcpy(&d, dynamic.data() + off, sizeof(d));
      if (d.d_tag == DT_NULL) break;
      if (d.d_tag != DT_SONAME) continue;
      absl::StatusOr<absl::string_view> name = elf->String(s.sh_link, d.d_un.d_val);
      return name.ok() ? std::string(name->substr(0, 256)) : "";
    }
  }
  return "";
}

struct Counts {
  long files = 0, readable = 0, elf = 0, checked = 0, big = 0, dirs = 0, entries = 0;
};

// Why the regular file `path` (open as `fd`, `size` bytes) is a vendor
// library, or "".
std::string VendorContent(int fd, off_t size, Counts* counts) {
  char magic[SELFMAG];
  if (size < static_cast<off_t>(sizeof(Elf64_Ehdr)) || pread(fd, magic, SELFMAG, 0) != SELFMAG ||
      std::memcmp(magic, ELFMAG, SELFMAG) != 0) {
    return "";
  }
  ++counts->elf;
  void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map == MAP_FAILED) return "";
  const absl::string_view data(static_cast<const char*>(map), size);
  std::string why;
  if (const std::string soname = Soname(data);
      !soname.empty() && (NameLooksVendor(soname) ||
                          ptxbench::sandbox::IsVendorLibraryName(soname))) {
    why = "SONAME " + soname;
  } else if (size <= kMaxWholeRead) {
    ++counts->checked;
    absl::StatusOr<ptxbench::worker::LibraryUse> use =
        ptxbench::worker::DetectLibraryInElfData(data);
    if (use.ok() && use->found()) why = use->library + ": " + use->evidence;
  } else {
    ++counts->big;
  }
  munmap(map, size);
  return why;
}

void Walk(const std::string& root, Counts* counts) {
  struct Pending {
    std::string path;
    int depth;
  };
  std::vector<Pending> pending = {{root, 0}};
  while (!pending.empty() && counts->entries < kMaxEntries) {
    const Pending here = std::move(pending.back());
    pending.pop_back();
    if (here.path == "/proc" || here.path == "/sys" || here.path == "/dev") continue;
    const int dir_fd = open(here.path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR* listing = dir_fd >= 0 ? fdopendir(dir_fd) : nullptr;
    if (listing == nullptr) {
      if (dir_fd >= 0) close(dir_fd);
      continue;
    }
    ++counts->dirs;
    const std::string prefix = here.path == "/" ? "/" : here.path + "/";
    while (dirent* e = readdir(listing)) {
      if (++counts->entries > kMaxEntries) break;
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      const std::string path = prefix + e->d_name;
      struct stat st;
      // Links are not followed: what they lead to is walked where it is.
      if (fstatat(dir_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      if (S_ISDIR(st.st_mode)) {
        if (here.depth < kMaxDepth) pending.push_back({path, here.depth + 1});
        continue;
      }
      if (!S_ISREG(st.st_mode)) continue;
      ++counts->files;
      const int fd = openat(dir_fd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0) continue;  // not readable as this uid: not in the view's reach
      ++counts->readable;
      // A mask reads as an empty file: nothing of a vendor's is left in it.
      std::string why;
      if (st.st_size > 0 && NameLooksVendor(e->d_name)) why = "name";
      if (st.st_size > 0) {
        const std::string content = VendorContent(fd, st.st_size, counts);
        if (!content.empty()) why = why.empty() ? content : why + ", " + content;
      }
      close(fd);
      if (!why.empty()) std::printf("VENDOR %s %s\n", path.c_str(), why.c_str());
    }
    closedir(listing);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: view_walker ROOT...\n");
    return 2;
  }
  Counts counts;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (absl::ConsumePrefix(&arg, "--show=")) {
      const std::string path(arg);
      struct stat st;
      const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
      const long long size = fd >= 0 && fstat(fd, &st) == 0 ? st.st_size : -1;
      if (fd >= 0) close(fd);
      std::printf("SHOW %s %lld\n", path.c_str(), size);
      continue;
    }
    Walk(argv[i], &counts);
  }
  std::printf(
      "walked %ld files (%ld readable, %ld ELF, %ld read whole, %ld too big to read whole) in "
      "%ld directories%s\n",
      counts.files, counts.readable, counts.elf, counts.checked, counts.big, counts.dirs,
      counts.entries >= kMaxEntries ? " (stopped at the entry bound)" : "");
  return 0;
}
