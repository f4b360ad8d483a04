#include "worker/compile/build_cache.h"

#include <algorithm>
#include <chrono>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"

namespace ptxbench::worker {
namespace fs = std::filesystem;

namespace {

// A cache key: 64 lowercase hex digits (sha256).
bool IsEntryName(const std::string& name) {
  return name.size() == 64 &&
         name.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

BuildCache::BuildCache(std::string dir, uint64_t max_bytes, absl::Duration grace)
    : dir_(std::move(dir)), max_bytes_(max_bytes), grace_(grace) {}

void BuildCache::Touch(const fs::path& entry) {
  std::error_code ec;
  fs::last_write_time(entry / kUseMark, fs::file_time_type::clock::now(), ec);
}

uint64_t BuildCache::BytesUnder(const fs::path& dir) {
  uint64_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code size_ec;
    if (it->is_regular_file(size_ec)) {
      const uintmax_t size = it->file_size(size_ec);
      if (!size_ec) total += size;
    }
  }
  return total;
}

BuildCache::Pruned BuildCache::Added(uint64_t bytes) {
  {
    absl::MutexLock lock(&mu_);
    estimate_ += bytes;
    if (max_bytes_ == 0 || (known_ && estimate_ <= max_bytes_)) return {};
    // The last walk left the folder over the bound (nothing was old enough
    // to go): another would find about the same, so not at once.
    if (stuck_ && absl::Now() - last_walk_ < grace_ / 10) return {};
  }
  return Prune();
}

BuildCache::Pruned BuildCache::Prune() {
  struct Entry {
    fs::path path;
    fs::file_time_type used;
    uint64_t bytes;
  };
  const auto now = fs::file_time_type::clock::now();
  const auto old = now - std::chrono::duration_cast<fs::file_time_type::duration>(
                             absl::ToChronoNanoseconds(grace_));
  std::vector<Entry> entries;
  Pruned pruned;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code entry_ec;
    const std::string name = it->path().filename().string();
    const bool building = absl::StartsWith(name, ".build-");
    // Only what the compiler makes: a folder given by mistake (a home)
    // keeps everything else.
    if (!(building || IsEntryName(name)) || !it->is_directory(entry_ec) ||
        it->is_symlink(entry_ec)) {
      continue;
    }
    const fs::path mark = it->path() / kUseMark;
    const bool finished = !building && fs::exists(mark, entry_ec);
    const fs::file_time_type used =
        fs::last_write_time(finished ? mark : it->path(), entry_ec);
    if (entry_ec) continue;  // removed meanwhile by another process
    const uint64_t bytes = BytesUnder(it->path());
    if (!finished && used < old) {
      fs::remove_all(it->path(), entry_ec);
      ++pruned.entries;
      pruned.bytes += bytes;
      continue;
    }
    entries.push_back({it->path(), used, bytes});
    pruned.kept += bytes;
  }
  if (max_bytes_ > 0 && pruned.kept > max_bytes_) {
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.used < b.used; });
    for (const Entry& e : entries) {
      if (pruned.kept <= max_bytes_ || e.used >= old) break;
      std::error_code remove_ec;
      fs::remove_all(e.path, remove_ec);
      ++pruned.entries;
      pruned.bytes += e.bytes;
      pruned.kept -= e.bytes;
    }
  }
  absl::MutexLock lock(&mu_);
  known_ = true;
  estimate_ = pruned.kept;
  stuck_ = max_bytes_ > 0 && pruned.kept > max_bytes_;
  last_walk_ = absl::Now();
  return pruned;
}

}  // namespace ptxbench::worker
