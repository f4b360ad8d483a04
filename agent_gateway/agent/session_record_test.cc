#include "agent_gateway/agent/session_record.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/utf8.h"

namespace ptxbench::agent_gateway {
namespace {

namespace fs = std::filesystem;
namespace v1 = ::ptxbench::v1;
using ::testing::HasSubstr;
using ::testing::Not;

int64_t PeakRssKib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

class SessionRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A tmpfs where there is one, as a session's directory is (and
    // removing 20,000 levels from this machine's ext4 took 51 s).
    const fs::path base =
        access("/dev/shm", W_OK) == 0 ? fs::path("/dev/shm") : fs::path(::testing::TempDir());
    dir_ = base / absl::StrCat("record_", getpid(), "_",
                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(workspace());
    fs::create_directories(home());
  }
  void TearDown() override {
    RemoveDeep(workspace());
    fs::remove_all(dir_);
  }

  fs::path workspace() const { return dir_ / "workspace"; }
  fs::path home() const { return dir_ / "home"; }

  static void Write(const fs::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }

  // A chain of `levels` directories named d under `top`, made one level at
  // a time from the last one's descriptor (a path that long cannot be
  // named at once); `file_at` levels hold a file f.
  static void MakeDeep(const fs::path& top, int levels, const std::set<int>& file_at) {
    int fd = open(top.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    for (int level = 1; level <= levels; ++level) {
      ASSERT_EQ(mkdirat(fd, "d", 0755), 0) << level;
      const int next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      close(fd);
      ASSERT_GE(next, 0) << level;
      fd = next;
      if (file_at.count(level) > 0) {
        const int f = openat(fd, "f", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ASSERT_EQ(write(f, "deep", 4), 4);
        close(f);
      }
    }
    close(fd);
  }
  // Removes MakeDeep's chain from its bottom up, holding one descriptor
  // (remove_all holds one per level, and renaming levels up took a minute).
  static void RemoveDeep(const fs::path& top) {
    int fd = open(top.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int depth = 0;
    for (int next;
         fd >= 0 && (next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0;
         ++depth) {
      close(fd);
      fd = next;
    }
    for (; fd >= 0 && depth > 0; --depth) {
      unlinkat(fd, "f", 0);
      const int parent = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      close(fd);
      fd = parent;
      if (fd >= 0) unlinkat(fd, "d", AT_REMOVEDIR);
    }
    if (fd >= 0) close(fd);
  }

  // The records of a session that left only its files, by name, and the
  // time the walk took.
  std::map<std::string, v1::AgentRecord> Records(absl::Duration* took = nullptr,
                                                 size_t* count = nullptr) {
    const absl::Time start = absl::Now();
    std::vector<v1::AgentRecord> records =
        SessionRecords({}, {}, home().string(), workspace().string(), {"kernel.cu"});
    if (took != nullptr) *took = absl::Now() - start;
    if (count != nullptr) *count = records.size();
    std::map<std::string, v1::AgentRecord> by_name;
    for (v1::AgentRecord& r : records) by_name[r.name()] = std::move(r);
    return by_name;
  }

  fs::path dir_;
};

// The walk that took 20 GB and 160 s on this tree (one descriptor and one
// path per level, cost growing with the square of the depth): 16 levels are
// walked, the rest said in the note, in bounded time and memory.
TEST_F(SessionRecordTest, ADirectory20000LevelsDeepIsWalkedToSixteenAndSaidSo) {
  Write(workspace() / "kernel.cu", "// k\n");
  MakeDeep(workspace(), 20'000, {3, 16, 17, 100, 19'999});
  const int64_t rss_before = PeakRssKib();
  absl::Duration took;
  size_t count = 0;
  const std::map<std::string, v1::AgentRecord> records = Records(&took, &count);
  const int64_t grew_kib = PeakRssKib() - rss_before;
  std::cout << "20000 levels: " << count << " records in " << took << ", peak RSS +" << grew_kib
            << " KiB\n";
  EXPECT_LT(took, absl::Seconds(5));
  EXPECT_LT(grew_kib, 64 << 10) << "memory in proportion to the caps, not the tree";
  EXPECT_EQ(records.at("workspace/kernel.cu").content(), "// k\n");
  EXPECT_EQ(records.at("workspace/d/d/d/f").content(), "deep");
  EXPECT_TRUE(records.count("workspace/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/f")) << "level 16";
  size_t workspace_files = 0;
  for (const auto& [name, r] : records) workspace_files += name.rfind("workspace/", 0) == 0;
  EXPECT_EQ(workspace_files, 3u) << "kernel.cu and the files of levels 3 and 16 only";
  const std::string note = records.at("workspace.notes").content();
  EXPECT_THAT(note, HasSubstr("dropped: 1 directory deeper than 16 levels, not walked"));
  EXPECT_FALSE(records.count("home.notes")) << "nothing of home was left out";
}

// 125,000 empty files (once 125,012 records, one blob row each): at most
// 1,000 are recorded, the kernel file first whatever else there is, and the
// note says how many were left.
TEST_F(SessionRecordTest, OneHundredTwentyFiveThousandFilesAreCutToAThousandAndSaidSo) {
  Write(workspace() / "kernel.cu", "// k\n");
  for (int i = 0; i < 125'000; ++i) {
    const int fd =
        open((workspace() / absl::StrCat("e", i)).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0) << i;
    close(fd);
  }
  const int64_t rss_before = PeakRssKib();
  absl::Duration took;
  size_t count = 0;
  const std::map<std::string, v1::AgentRecord> records = Records(&took, &count);
  const int64_t grew_kib = PeakRssKib() - rss_before;
  std::cout << "125000 files: " << count << " records in " << took << ", peak RSS +" << grew_kib
            << " KiB\n";
  EXPECT_LT(took, absl::Seconds(5));
  EXPECT_LT(grew_kib, 64 << 10);
  // events, stderr, model calls, the 1,000 files, the note.
  EXPECT_EQ(count, 3u + 1'000u + 1u);
  EXPECT_EQ(records.at("workspace/kernel.cu").content(), "// k\n");
  const std::string note = records.at("workspace.notes").content();
  // 10,000 entries looked at: 999 files recorded beside the kernel file,
  // the others counted (9,000, or 9,001 where the kernel file, skipped as
  // recorded already, was not among them); the 115,001 after them counted.
  EXPECT_THAT(note,
              ::testing::ContainsRegex("dropped: 900[01] files past the first 1000 recorded"));
  EXPECT_THAT(note, HasSubstr("dropped: 115001 entries not looked at: the walk stopped after "
                              "looking at 10000 entries"));
}

// A file name that is not UTF-8 made the whole end report unparseable (the
// trajectory lost, its records gone): it is recorded under its escaped name,
// the note says so, and the outcome parses.
TEST_F(SessionRecordTest, NamesThatAreNotUtf8AreRecordedEscapedAndTheOutcomeParses) {
  Write(workspace() / "bad\xffname.cu", "x");
  fs::create_directories(workspace() / "dir\xfe");
  Write(workspace() / "dir\xfe" / "a\\b", "y");
  Write(workspace() / "caf\xc3\xa9.cu", "z");  // UTF-8: as it is
  std::map<std::string, v1::AgentRecord> records = Records();
  EXPECT_EQ(records.at("workspace/bad\\xffname.cu").content(), "x");
  EXPECT_EQ(records.at("workspace/dir\\xfe/a\\\\b").content(), "y");
  EXPECT_EQ(records.at("workspace/caf\xc3\xa9.cu").content(), "z");
  const std::string note = records.at("workspace.notes").content();
  EXPECT_THAT(note, HasSubstr("escaped: workspace/bad\\xffname.cu (its name is not UTF-8"));
  EXPECT_THAT(note, HasSubstr("escaped: workspace/dir\\xfe/a\\\\b"));
  EXPECT_THAT(note, Not(HasSubstr("caf")));
  v1::AgentOutcome outcome;
  outcome.set_end(v1::AGENT_FINISHED);
  for (auto& [name, r] : records) {
    EXPECT_TRUE(IsValidUtf8(name)) << name;
    *outcome.add_records() = r;
  }
  v1::AgentOutcome parsed;
  EXPECT_TRUE(parsed.ParseFromString(outcome.SerializeAsString()));
  EXPECT_EQ(parsed.records_size(), outcome.records_size());
}

// Links (to files and directories of this machine) are never followed, a
// FIFO never opened for long; the note counts them.
TEST_F(SessionRecordTest, LinksAndFifosAreNotFollowedAndSaidSo) {
  const fs::path outside = dir_ / "outside";
  fs::create_directories(outside);
  Write(outside / "secret.txt", "PTXB-SECRET");
  fs::create_symlink(outside / "secret.txt", workspace() / "kernel.cu");
  fs::create_directory_symlink(outside, workspace() / "linked");
  ASSERT_EQ(mkfifo((workspace() / "pipe").c_str(), 0644), 0);
  Write(workspace() / "real.cu", "real");
  std::map<std::string, v1::AgentRecord> records = Records();
  EXPECT_EQ(records.at("workspace/real.cu").content(), "real");
  for (const auto& [name, r] : records) {
    EXPECT_THAT(r.content(), Not(HasSubstr("PTXB-SECRET"))) << name;
  }
  EXPECT_FALSE(records.count("workspace/kernel.cu"));
  EXPECT_THAT(records.at("workspace.notes").content(),
              HasSubstr("dropped: 3 links, FIFOs, sockets or devices"));
}

// Each bound of RecordTree, small: files, bytes (names included), entries,
// depth; and only the files `keep` wants, unmentioned when refused.
TEST_F(SessionRecordTest, EachBoundHoldsAndIsSaid) {
  for (int i = 0; i < 5; ++i) Write(workspace() / absl::StrCat("f", i), std::string(100, 'x'));
  fs::create_directories(workspace() / "a" / "b" / "c");
  Write(workspace() / "a" / "b" / "c" / "deep", "d");
  auto walk = [&](TreeLimits limits) {
    std::vector<v1::AgentRecord> out;
    RecordTree({workspace().string(), "w/", {}, nullptr, limits}, &out);
    return out;
  };
  TreeLimits files;
  files.max_files = 2;
  std::vector<v1::AgentRecord> out = walk(files);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_THAT(out.back().content(), HasSubstr("dropped: 4 files past the first 2 recorded"));
  EXPECT_EQ(out.back().name(), "w.notes");

  TreeLimits bytes;
  bytes.total_bytes = 250;  // two files of 100 and their names; the third cut
  out = walk(bytes);
  size_t stored = 0;
  for (const v1::AgentRecord& r : out) {
    if (r.name() != "w.notes") stored += r.name().size() + r.content().size();
  }
  EXPECT_LE(stored, 250u);
  EXPECT_THAT(out.back().content(), HasSubstr("past the 250 bytes recorded"));

  TreeLimits depth;
  depth.max_depth = 2;
  out = walk(depth);
  EXPECT_THAT(out.back().content(),
              HasSubstr("dropped: 1 directory deeper than 2 levels, not walked"));

  TreeLimits entries;
  entries.max_entries = 3;
  out = walk(entries);
  EXPECT_THAT(out.back().content(), HasSubstr("dropped: 3 entries not looked at"));

  Write(home() / "session.jsonl", "{}");
  Write(home() / "settings.json", "{}");
  Write(home() / "cache.bin", "no");
  out.clear();
  RecordTree({home().string(),
              "home/",
              {},
              [](absl::string_view n) { return absl::EndsWith(n, ".jsonl"); },
              {}},
             &out);
  ASSERT_EQ(out.size(), 1u) << "no note: what keep refused is not dropped";
  EXPECT_EQ(out[0].name(), "home/session.jsonl");
}

// The model calls' file is bounded in lines as well as bodies: a session of
// many large calls is cut, the last line counting what was left out (the
// calls themselves are in the outcome's totals).
TEST_F(SessionRecordTest, ModelCallsStopAtTheirCapCountingTheRest) {
  ModelProxy::Call call;
  call.target = "POST /v1/messages " + std::string(32 << 10, 'p');
  call.request = std::string(256 << 10, 'r');
  const std::vector<ModelProxy::Call> calls(100, call);
  const std::vector<v1::AgentRecord> records = SessionRecords({}, calls, "", "");
  const v1::AgentRecord& jsonl = records.at(2);
  ASSERT_EQ(jsonl.name(), "model_calls.jsonl");
  EXPECT_TRUE(jsonl.truncated());
  EXPECT_LE(jsonl.content().size(), (5u << 20) + (64u << 10));
  const std::string& text = jsonl.content();
  const size_t lines = std::count(text.begin(), text.end(), '\n');
  const std::string last = text.substr(text.rfind('\n', text.size() - 2) + 1);
  EXPECT_EQ(last, absl::StrCat("{\"dropped_calls\":", 100 - (lines - 1),
                               ",\"why\":\"the file reached 5 MiB\"}\n"));
}

}  // namespace
}  // namespace ptxbench::agent_gateway
