#include "agent_gateway/agent/session_record.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/utf8.h"
#include "nlohmann/json.hpp"

namespace ptxbench::agent_gateway {
namespace {

namespace v1 = ::ptxbench::v1;
using Json = nlohmann::json;

constexpr size_t kEvents = 8 << 20;
constexpr size_t kStderr = 1 << 20;
constexpr size_t kCalls = 4 << 20;      // bodies up to here
constexpr size_t kCallLines = 5 << 20;  // lines up to here
constexpr size_t kHome = 2 << 20;
constexpr size_t kWorkspaceFile = 256 << 10;
constexpr size_t kWorkspace = 1 << 20;
// Escaped names listed in a tree's note, in bytes (a name escaped can be
// four times its 4 KiB path).
constexpr size_t kListedEscapes = 16 << 10;

v1::AgentRecord Record(std::string name, std::string content, bool truncated) {
  v1::AgentRecord r;
  r.set_name(std::move(name));
  r.set_content(std::move(content));
  r.set_truncated(truncated);
  return r;
}

std::string Capped(const std::string& text, size_t cap) { return text.substr(0, cap); }

const char* CallKindName(ModelProxy::CallKind kind) {
  switch (kind) {
    case ModelProxy::CallKind::kModel: return "model";
    case ModelProxy::CallKind::kTokenCount: return "token_count";
    case ModelProxy::CallKind::kAdmissionCount: return "admission_count";
    case ModelProxy::CallKind::kRefused: return "refused";
  }
  return "refused";
}

std::string CallsJsonl(const std::vector<ModelProxy::Call>& calls, bool* truncated) {
  std::string out;
  int64_t dropped = 0;
  for (const ModelProxy::Call& c : calls) {
    if (out.size() >= kCallLines) {
      ++dropped;
      continue;
    }
    Json line = {{"started_unix_ms", c.started_unix_ms},
                 {"latency_ms", c.latency_ms},
                 {"kind", CallKindName(c.kind)},
                 {"target", c.target},
                 {"status", c.status},
                 {"refused", c.refused},
                 {"edits", c.edits},
                 {"input_tokens", c.usage.input_tokens()},
                 {"output_tokens", c.usage.output_tokens()},
                 {"reasoning_tokens", c.usage.reasoning_tokens()},
                 {"cached_tokens", c.usage.cached_tokens()},
                 {"cost_usd", c.cost_usd},
                 {"reserved_tokens", c.reserved_tokens},
                 {"charged_reservation", c.charged_reservation}};
    // Each body is as the proxy kept it (ModelProxy::kRecordedBody each).
    if (out.size() < kCalls) {
      line["request"] = c.request;
      line["response"] = c.response;
      line["bodies_truncated"] = c.bodies_truncated;
    } else {
      *truncated = true;  // the line without its bodies
    }
    out += line.dump(-1, ' ', false, Json::error_handler_t::replace);
    out += '\n';
  }
  if (dropped > 0) {
    // The calls themselves are counted in the outcome's totals.
    out += Json{{"dropped_calls", dropped}, {"why", "the file reached 5 MiB"}}.dump();
    out += '\n';
    *truncated = true;
  }
  return out;
}

bool SessionFile(absl::string_view name) {
  // Its own transcripts, not the settings ptxbench wrote.
  return (absl::EndsWith(name, ".jsonl") || absl::EndsWith(name, ".json")) &&
         name != "settings.json" && name != "mcp.json";
}

// "1 file", "9000 files".
std::string Count(int64_t n, absl::string_view one, absl::string_view many) {
  return absl::StrCat(n, " ", n == 1 ? one : many);
}

// A descriptor, closed when it goes.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// One walk of RecordTree: breadth-first, so the top of the tree is recorded
// before its depths; each directory opened from the top one component at a
// time (O_NOFOLLOW | O_DIRECTORY), so no link is followed anywhere on the
// way and no descriptor is held per level.
class TreeWalk {
 public:
  TreeWalk(const TreeRecord& tree, std::vector<v1::AgentRecord>* out)
      : tree_(tree),
        limits_(tree.limits),
        out_(out),
        first_(tree.first.begin(), tree.first.end()),
        deadline_(absl::Now() + tree.limits.time) {}

  void Run() {
    Fd top(open(tree_.dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (top.get() < 0) return;  // none (the session never made it), or a link
    top_ = top.get();
    for (const std::string& name : tree_.first) {
      if (name.find('/') != std::string::npos) continue;  // only names at the top
      if (tree_.keep == nullptr || tree_.keep(name)) AddFile(top_, name.c_str(), name);
    }
    dirs_.push_back({-1, "", 0});
    for (size_t i = 0; i < dirs_.size(); ++i) {
      if (stop_ != Stop::kNo) {
        unwalked_ = static_cast<int64_t>(dirs_.size() - i);
        break;
      }
      const int fd = OpenDir(i);
      if (fd < 0) {
        ++unreadable_;
        continue;
      }
      ReadDir(i, fd);
    }
    AddNote();
  }

 private:
  struct Dir {
    int64_t parent;    // index in dirs_; -1 for the top
    std::string name;  // one component
    int depth;         // the top is 0
  };
  enum class Stop { kNo, kEntries, kTime };

  // The chain of components from the top to dirs_[index].
  std::vector<const std::string*> Chain(size_t index) const {
    std::vector<const std::string*> chain;
    for (int64_t i = static_cast<int64_t>(index); i > 0; i = dirs_[i].parent) {
      chain.push_back(&dirs_[i].name);
    }
    std::reverse(chain.begin(), chain.end());
    return chain;
  }

  std::string Path(size_t index, absl::string_view name) const {
    std::string path;
    for (const std::string* part : Chain(index)) absl::StrAppend(&path, *part, "/");
    return absl::StrCat(path, name);
  }

  // An owned descriptor of dirs_[index], or -1.
  int OpenDir(size_t index) const {
    int dir = openat(top_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    for (const std::string* part : Chain(index)) {
      if (dir < 0) break;
      const int next = openat(dir, part->c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      close(dir);
      dir = next;
    }
    return dir;
  }

  void ReadDir(size_t index, int fd) {
    DIR* d = fdopendir(fd);
    if (d == nullptr) {
      close(fd);
      ++unreadable_;
      return;
    }
    const int depth = dirs_[index].depth;
    while (const dirent* e = readdir(d)) {
      const absl::string_view name = e->d_name;
      if (name == "." || name == "..") continue;
      // Once stopped, the rest of this directory is only counted, within
      // the time limit.
      if (stop_ == Stop::kNo && ++entries_ > limits_.max_entries) stop_ = Stop::kEntries;
      if (absl::Now() > deadline_) stop_ = Stop::kTime;
      if (stop_ != Stop::kNo) {
        ++unseen_;
        if (stop_ == Stop::kTime) break;
        continue;
      }
      unsigned char type = e->d_type;
      if (type == DT_UNKNOWN) {
        struct stat st {};
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
          ++unreadable_;
          continue;
        }
        type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_LNK;
      }
      if (type == DT_DIR) {
        if (depth + 1 > limits_.max_depth) {
          ++too_deep_;
        } else {
          dirs_.push_back({static_cast<int64_t>(index), std::string(name), depth + 1});
        }
        continue;
      }
      if (depth == 0 && first_.count(std::string(name)) > 0) continue;  // recorded already
      if (tree_.keep != nullptr && !tree_.keep(name)) continue;
      if (type != DT_REG) {
        ++not_regular_;
        continue;
      }
      AddFile(dirfd(d), e->d_name, Path(index, name));
    }
    closedir(d);
  }

  void AddFile(int dir_fd, const char* name, const std::string& path) {
    if (recorded_ >= limits_.max_files) {
      ++past_files_;
      return;
    }
    // O_NONBLOCK: a FIFO put in a regular file's place must not block the
    // open; fstat then refuses it.
    Fd file(openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    struct stat st {};
    if (file.get() < 0) {
      if (errno == ELOOP) ++not_regular_;
      if (errno != ENOENT && errno != ELOOP) ++unreadable_;
      return;
    }
    if (fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
      ++not_regular_;
      return;
    }
    const bool escaped = !IsValidUtf8(path);
    std::string record_name = absl::StrCat(tree_.prefix, escaped ? EscapeInvalidUtf8(path) : path);
    if (used_ + record_name.size() > limits_.total_bytes) {
      ++past_bytes_;
      return;
    }
    const size_t size = static_cast<size_t>(st.st_size);
    std::string content(
        std::min({size, limits_.file_bytes, limits_.total_bytes - used_ - record_name.size()}),
        '\0');
    size_t got = 0;
    for (ssize_t n; got < content.size() &&
                    (n = read(file.get(), content.data() + got, content.size() - got)) > 0;) {
      got += static_cast<size_t>(n);
    }
    content.resize(got);
    used_ += record_name.size() + got;
    ++recorded_;
    if (escaped) {
      ++escaped_;
      if (listed_bytes_ < kListedEscapes) {
        listed_bytes_ += record_name.size();
        listed_.push_back(record_name);
      }
    }
    out_->push_back(Record(std::move(record_name), std::move(content), size > got));
  }

  void AddNote() {
    std::vector<std::string> lines;
    auto dropped = [&lines](int64_t n, const std::string& what) {
      if (n > 0) lines.push_back(absl::StrCat("dropped: ", what));
    };
    dropped(past_files_, absl::StrCat(Count(past_files_, "file", "files"), " past the first ",
                                      limits_.max_files, " recorded"));
    dropped(past_bytes_, absl::StrCat(Count(past_bytes_, "file", "files"), " past the ",
                                      limits_.total_bytes, " bytes recorded (names and contents)"));
    dropped(too_deep_,
            absl::StrCat(Count(too_deep_, "directory", "directories"), " deeper than ",
                         limits_.max_depth, " levels, not walked (what they hold is not counted)"));
    const std::string why =
        stop_ == Stop::kTime
            ? absl::StrCat("the walk stopped at its time limit of ",
                           absl::FormatDuration(limits_.time))
            : absl::StrCat("the walk stopped after looking at ", limits_.max_entries, " entries");
    dropped(unseen_, absl::StrCat(stop_ == Stop::kTime ? "at least " : "",
                                  Count(unseen_, "entry", "entries"), " not looked at: ", why));
    dropped(unwalked_, absl::StrCat(Count(unwalked_, "directory", "directories"),
                                    " not walked (what they hold is not counted): ", why));
    dropped(not_regular_, absl::StrCat(Count(not_regular_, "link, FIFO, socket or device",
                                             "links, FIFOs, sockets or devices"),
                                       " (only regular files are recorded)"));
    dropped(unreadable_, Count(unreadable_, "entry that could not be opened",
                               "entries that could not be opened"));
    for (const std::string& name : listed_) {
      lines.push_back(absl::StrCat("escaped: ", name,
                                   " (its name is not UTF-8: each byte outside UTF-8 is "
                                   "written \\xNN, each backslash \\\\)"));
    }
    if (escaped_ > static_cast<int64_t>(listed_.size())) {
      lines.push_back(absl::StrCat("escaped: ", escaped_ - static_cast<int64_t>(listed_.size()),
                                   " more names not listed here"));
    }
    if (lines.empty()) return;
    lines.insert(lines.begin(),
                 absl::StrCat("the record of ", tree_.prefix, " is bounded: ", limits_.max_files,
                              " files, ", limits_.total_bytes, " bytes (", limits_.file_bytes,
                              " a file), ", limits_.max_depth, " levels, ", limits_.max_entries,
                              " entries looked at, ", absl::FormatDuration(limits_.time)));
    std::string note_name = tree_.prefix;
    if (absl::EndsWith(note_name, "/")) note_name.pop_back();
    out_->push_back(Record(absl::StrCat(note_name, ".notes"),
                           absl::StrCat(absl::StrJoin(lines, "\n"), "\n"), false));
  }

  const TreeRecord& tree_;
  const TreeLimits& limits_;
  std::vector<v1::AgentRecord>* const out_;
  const std::set<std::string> first_;
  const absl::Time deadline_;
  int top_ = -1;
  std::vector<Dir> dirs_;  // found so far; walked in order
  Stop stop_ = Stop::kNo;
  int64_t entries_ = 0, recorded_ = 0, escaped_ = 0;
  size_t used_ = 0, listed_bytes_ = 0;
  std::vector<std::string> listed_;  // escaped names, for the note
  // What was left out, for the note.
  int64_t past_files_ = 0, past_bytes_ = 0, too_deep_ = 0, unseen_ = 0, unwalked_ = 0,
          not_regular_ = 0, unreadable_ = 0;
};

}  // namespace

void RecordTree(const TreeRecord& tree, std::vector<v1::AgentRecord>* out) {
  TreeWalk(tree, out).Run();
}

std::vector<v1::AgentRecord> SessionRecords(const SessionOutput& output,
                                            const std::vector<ModelProxy::Call>& calls,
                                            const std::string& home, const std::string& workspace,
                                            const std::vector<std::string>& workspace_first) {
  std::vector<v1::AgentRecord> records;
  records.push_back(Record("events.jsonl", Capped(output.events, kEvents),
                           output.events_dropped > 0 || output.events.size() > kEvents));
  const std::string& err = output.stderr_text;
  records.push_back(Record("stderr.txt",
                           err.substr(err.size() > kStderr ? err.size() - kStderr : 0),
                           output.stderr_dropped > 0 || err.size() > kStderr));
  bool calls_truncated = false;
  std::string calls_jsonl = CallsJsonl(calls, &calls_truncated);
  records.push_back(Record("model_calls.jsonl", std::move(calls_jsonl), calls_truncated));
  TreeRecord native{home, "home/", {}, SessionFile, {}};
  native.limits.file_bytes = native.limits.total_bytes = kHome;
  RecordTree(native, &records);
  TreeRecord files{workspace, "workspace/", workspace_first, nullptr, {}};
  files.limits.file_bytes = kWorkspaceFile;
  files.limits.total_bytes = kWorkspace;
  RecordTree(files, &records);
  return records;
}

}  // namespace ptxbench::agent_gateway
