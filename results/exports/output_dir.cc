#include "results/exports/output_dir.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ptxbench::exports {
namespace {

namespace fs = std::filesystem;

// A new folder beside `target`, named `.NAME.partial-` and six random
// characters, made as mkdir(1) makes one: 0777 less the umask. (mkdtemp's
// 0700 would stay on the finished export, which the user may mean to share.)
absl::StatusOr<std::string> MakePartialDir(const fs::path& target) {
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  const std::string prefix =
      (target.parent_path() / absl::StrCat(".", target.filename().string(), ".partial-")).string();
  absl::BitGen gen;
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string path = prefix;
    for (int i = 0; i < 6; ++i) path += kChars[absl::Uniform<size_t>(gen, 0, sizeof(kChars) - 1)];
    if (::mkdir(path.c_str(), 0777) == 0) return path;
    if (errno != EEXIST) break;
  }
  return absl::InternalError(
      absl::StrCat("cannot create a folder beside ", target.string(), ": ", std::strerror(errno)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<OutputDir>> OutputDir::Create(const std::string& final_path) {
  if (final_path.empty()) return absl::InvalidArgumentError("no output folder given");
  std::error_code ec;
  fs::path target = fs::absolute(fs::path(final_path), ec).lexically_normal();
  if (ec) {
    return absl::InvalidArgumentError(absl::StrCat("output folder ", final_path, ": ", ec.message()));
  }
  if (!target.has_filename()) target = target.parent_path();  // "out/"
  if (target == target.root_path()) {
    return absl::InvalidArgumentError(absl::StrCat("output folder ", final_path,
                                                   " is a file system root"));
  }
  const fs::file_status status = fs::symlink_status(target, ec);
  if (fs::exists(status)) {
    if (!fs::is_directory(status)) {
      return absl::AlreadyExistsError(
          absl::StrCat("output folder ", target.string(), " exists and is not a folder"));
    }
    if (!fs::is_empty(target, ec) || ec) {
      return absl::AlreadyExistsError(absl::StrCat(
          "output folder ", target.string(), " exists and is not empty; name a new folder"));
    }
  }
  fs::create_directories(target.parent_path(), ec);
  if (ec) {
    return absl::InternalError(absl::StrCat("cannot create ", target.parent_path().string(), ": ",
                                            ec.message()));
  }
  PTXB_ASSIGN_OR_RETURN(std::string partial, MakePartialDir(target));
  return std::unique_ptr<OutputDir>(new OutputDir(std::move(partial), target.string()));
}

OutputDir::~OutputDir() {
  if (committed_) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string OutputDir::File(absl::string_view relative) const {
  return absl::StrCat(path_, "/", relative);
}

absl::Status OutputDir::MakeDirs(absl::string_view relative) const {
  std::error_code ec;
  fs::create_directories(File(relative), ec);
  if (ec) {
    return absl::InternalError(absl::StrCat("cannot create ", File(relative), ": ", ec.message()));
  }
  return absl::OkStatus();
}

absl::Status OutputDir::Commit() {
  if (committed_) return absl::FailedPreconditionError(absl::StrCat(final_path_, " is complete"));
  // rename(2) replaces an empty folder and refuses a non-empty one, in one
  // step: nothing can slip in between a check and the move.
  if (::rename(path_.c_str(), final_path_.c_str()) != 0) {
    if (errno == ENOTEMPTY || errno == EEXIST || errno == ENOTDIR) {
      return absl::AlreadyExistsError(absl::StrCat(
          "output folder ", final_path_, " appeared while the export was written; not replaced"));
    }
    return absl::InternalError(
        absl::StrCat("cannot move ", path_, " to ", final_path_, ": ", std::strerror(errno)));
  }
  committed_ = true;
  return absl::OkStatus();
}

}  // namespace ptxbench::exports
