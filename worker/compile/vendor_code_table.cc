#include "worker/compile/vendor_code_table.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <regex>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/cache_dir.h"
#include "common/file.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/status_macros.h"

namespace ptxbench::worker {
namespace fs = std::filesystem;
namespace {

constexpr absl::string_view kFileMagic = "ptxbench-vendor-code-1\n";

// A read-only mapping of a whole file (libcublasLt is over 500 MB).
class MappedFile {
 public:
  static absl::StatusOr<std::unique_ptr<MappedFile>> Open(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return absl::NotFoundError(absl::StrCat("cannot open ", path));
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size == 0) {
      close(fd);
      return absl::InvalidArgumentError(absl::StrCat(path, " is empty or unreadable"));
    }
    void* p = mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return absl::InternalError(absl::StrCat("cannot map ", path));
    auto m = std::unique_ptr<MappedFile>(new MappedFile);
    m->data_ = static_cast<const char*>(p);
    m->size_ = st.st_size;
    return m;
  }
  ~MappedFile() { munmap(const_cast<char*>(data_), size_); }
  absl::string_view bytes() const { return {data_, size_}; }

 private:
  MappedFile() = default;
  const char* data_ = nullptr;
  size_t size_ = 0;
};

// Collects the kernel sections' hashes of every cubin in a library.
class Collector final : public ImageVisitor {
 public:
  explicit Collector(std::vector<uint64_t>* hashes) : hashes_(hashes) {}
  absl::StatusOr<bool> OnElf(const ElfView& elf, const ImageSite&) override {
    PTXB_RETURN_IF_ERROR(ForEachKernelSection(elf, [&](absl::string_view, absl::string_view code) {
                           hashes_->push_back(KernelSectionHash(code));
                           return false;
                         }).status());
    return false;
  }
  absl::StatusOr<bool> OnPtx(absl::string_view, const ImageSite&) override { return false; }

 private:
  std::vector<uint64_t>* hashes_;
};

std::string Identity(const std::vector<VendorLibrary>& libraries) {
  std::string id = "vendor-code-1";
  for (const VendorLibrary& l : libraries) {
    struct stat st{};  // zeros when it cannot be read (Build then fails on it)
    stat(l.path.c_str(), &st);
    absl::StrAppend(&id, ";", l.path, ":", st.st_size, ":", st.st_mtim.tv_sec, ".",
                    st.st_mtim.tv_nsec);
  }
  return id;
}

template <typename T>
void Put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(v));
}

template <typename T>
bool Take(absl::string_view* in, T* v) {
  if (in->size() < sizeof(T)) return false;
  std::memcpy(v, in->data(), sizeof(T));
  in->remove_prefix(sizeof(T));
  return true;
}

}  // namespace

uint64_t KernelSectionHash(absl::string_view code) { return StableHash64(code); }

absl::StatusOr<bool> ForEachKernelSection(
    const ElfView& elf,
    const std::function<bool(absl::string_view name, absl::string_view code)>& each) {
  if (elf.header().e_machine != EM_CUDA) return false;
  for (const Elf64_Shdr& s : elf.sections()) {
    if (s.sh_type != SHT_PROGBITS || (s.sh_flags & SHF_EXECINSTR) == 0 ||
        s.sh_size < kMinHashedSection) {
      continue;
    }
    PTXB_RETURN_IF_ERROR(elf.budget()->Charge(s.sh_size));
    PTXB_ASSIGN_OR_RETURN(absl::string_view name, elf.SectionName(s));
    if (each(name, elf.SectionBytes(s))) return true;
  }
  return false;
}

absl::StatusOr<std::unique_ptr<VendorCodeTable>> VendorCodeTable::Build(
    const std::vector<VendorLibrary>& libraries) {
  auto table = std::unique_ptr<VendorCodeTable>(new VendorCodeTable);
  table->identity_ = Identity(libraries);
  // The toolkit's files are not the model's: their bound is their size,
  // one entry decompressed at a time.
  ScanLimits limits;
  limits.max_decompressed_bytes = std::numeric_limits<uint64_t>::max() / 64;
  limits.skip_unreadable = true;
  for (const VendorLibrary& library : libraries) {
    PTXB_ASSIGN_OR_RETURN(std::unique_ptr<MappedFile> file, MappedFile::Open(library.path));
    std::vector<uint64_t> hashes;
    Collector collector(&hashes);
    if (absl::Status s = ScanGpuImages(file->bytes(), limits, &collector); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(library.path, ": ", s.message()));
    }
    uint32_t index = 0;
    if (auto it = std::find(table->names_.begin(), table->names_.end(), library.name);
        it != table->names_.end()) {
      index = it - table->names_.begin();
    } else {
      index = table->names_.size();
      table->names_.push_back(library.name);
    }
    for (uint64_t h : hashes) table->entries_.push_back({h, index});
  }
  table->Sort();
  return table;
}

void VendorCodeTable::Sort() {
  std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
    return a.hash != b.hash ? a.hash < b.hash : a.library < b.library;
  });
  entries_.erase(std::unique(entries_.begin(), entries_.end(),
                             [](const Entry& a, const Entry& b) { return a.hash == b.hash; }),
                 entries_.end());
  entries_.shrink_to_fit();
}

std::vector<VendorLibrary> VendorCodeTable::FindLibraries(const std::vector<std::string>& dirs) {
  static const std::regex kName(R"(lib(cublasLt|cublas|cudnn)[A-Za-z0-9_]*\.so(\.[0-9]+)*)");
  std::map<std::string, VendorLibrary> found;  // by real path
  for (const std::string& dir : dirs) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      std::smatch m;
      if (!std::regex_match(name, m, kName)) continue;
      std::error_code real_ec;
      const fs::path real = fs::canonical(it->path(), real_ec);
      if (real_ec || !fs::is_regular_file(real, real_ec)) continue;
      const std::string family = m[1].str();
      const std::string library =
          family == "cublasLt" ? "cuBLASLt" : family == "cublas" ? "cuBLAS" : "cuDNN";
      found.emplace(real.string(), VendorLibrary{real.string(), library});
    }
  }
  std::vector<VendorLibrary> out;
  for (auto& [path, library] : found) out.push_back(std::move(library));
  return out;
}

absl::StatusOr<std::unique_ptr<VendorCodeTable>> VendorCodeTable::LoadOrBuild(
    const std::vector<VendorLibrary>& libraries, const std::string& cache_dir) {
  const std::string identity = Identity(libraries);
  const std::string path =
      cache_dir.empty()
          ? ""
          : (fs::path(cache_dir) / absl::StrCat("vendor-code-", Sha256Hex(identity).substr(0, 16),
                                                ".bin"))
                .string();
  // A table that misses entries passes vendor code: one that another user
  // could have written is not read.
  if (!path.empty() && fs::exists(path) && !PrivateFile(path)) {
    LogWarning("vendor code table cache not private (owner or mode); rebuilding",
               {{"path", path}});
  } else if (!path.empty() && fs::exists(path)) {
    absl::StatusOr<std::string> bytes = ReadFile(path);
    if (bytes.ok()) {
      absl::StatusOr<std::unique_ptr<VendorCodeTable>> table = Deserialize(*bytes);
      if (table.ok() && (*table)->identity_ == identity) return table;
    }
    LogWarning("vendor code table cache unreadable; rebuilding", {{"path", path}});
  }
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<VendorCodeTable> table, Build(libraries));
  if (!path.empty()) {
    std::error_code ec;
    fs::create_directories(cache_dir, ec);
    chmod(cache_dir.c_str(), 0700);
    if (absl::Status s = WriteFileAtomically(path, table->Serialize()); !s.ok()) {
      LogWarning("vendor code table not kept", {{"path", path}, {"error", s.ToString()}});
    }
  }
  return table;
}

absl::string_view VendorCodeTable::Find(uint64_t hash) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), Entry{hash, 0});
  if (it == entries_.end() || it->hash != hash) return {};
  return names_[it->library];
}

std::string VendorCodeTable::Serialize() const {
  std::string out(kFileMagic);
  Put<uint32_t>(&out, identity_.size());
  out += identity_;
  Put<uint32_t>(&out, names_.size());
  for (const std::string& n : names_) {
    Put<uint32_t>(&out, n.size());
    out += n;
  }
  Put<uint64_t>(&out, entries_.size());
  for (const Entry& e : entries_) {
    Put<uint64_t>(&out, e.hash);
    Put<uint32_t>(&out, e.library);
  }
  return out;
}

absl::StatusOr<std::unique_ptr<VendorCodeTable>> VendorCodeTable::Deserialize(
    absl::string_view in) {
  auto bad = [] { return absl::DataLossError("not a vendor code table"); };
  if (!absl::ConsumePrefix(&in, kFileMagic)) return bad();
  auto table = std::unique_ptr<VendorCodeTable>(new VendorCodeTable);
  auto take_string = [&](std::string* s) {
    uint32_t n = 0;
    if (!Take(&in, &n) || n > in.size()) return false;
    s->assign(in.data(), n);
    in.remove_prefix(n);
    return true;
  };
  uint32_t names = 0;
  if (!take_string(&table->identity_) || !Take(&in, &names) || names > in.size()) return bad();
  table->names_.resize(names);
  for (std::string& n : table->names_) {
    if (!take_string(&n)) return bad();
  }
  uint64_t count = 0;
  constexpr size_t kEntryBytes = sizeof(uint64_t) + sizeof(uint32_t);
  if (!Take(&in, &count) || count != in.size() / kEntryBytes || in.size() % kEntryBytes != 0) {
    return bad();
  }
  table->entries_.resize(count);
  for (Entry& e : table->entries_) {
    if (!Take(&in, &e.hash) || !Take(&in, &e.library) || e.library >= names) return bad();
  }
  if (!std::is_sorted(table->entries_.begin(), table->entries_.end())) return bad();
  return table;
}

std::unique_ptr<VendorCodeTable> VendorCodeTable::FromHashes(const std::string& library,
                                                             std::vector<uint64_t> hashes) {
  auto table = std::unique_ptr<VendorCodeTable>(new VendorCodeTable);
  table->identity_ = absl::StrCat("test:", library, ":", hashes.size());
  table->names_ = {library};
  for (uint64_t h : hashes) table->entries_.push_back({h, 0});
  table->Sort();
  return table;
}

}  // namespace ptxbench::worker
