#include "worker/runner/hosts/python_view.h"

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxbench::runner {
namespace {

using ::testing::ElementsAre;

TEST(CollapseRootsTest, KeepsExistingAbsolutePathsNoneInsideAnother) {
  const std::string dir = std::filesystem::temp_directory_path() / "python_view_test";
  std::filesystem::create_directories(dir + "/lib/site/torch");
  std::filesystem::create_directories(dir + "/libx");
  const std::string printed = dir + "/lib/site/torch\n" + dir + "/lib/\n" + "relative/path\n" +
                              dir + "/absent\n\n" + dir + "/libx\n" + dir + "/lib\n";
  EXPECT_THAT(CollapseRoots(printed), ElementsAre(dir + "/lib", dir + "/libx"));
  std::filesystem::remove_all(dir);
}

TEST(CollapseRootsTest, RootHoldsEverything) {
  EXPECT_THAT(CollapseRoots("/\n/usr\n/tmp\n"), ElementsAre("/"));
}

TEST(PythonRootsTest, AskTheInterpreterItself) {
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3 here";
  absl::StatusOr<std::vector<std::string>> roots = PythonRoots("/usr/bin/python3");
  ASSERT_TRUE(roots.ok()) << roots.status();
  // Its standard library (Debian's /usr/lib/python3.N/os.py) is inside a root.
  std::string os_py;
  for (const auto& e : std::filesystem::directory_iterator("/usr/lib")) {
    const std::filesystem::path candidate = e.path() / "os.py";
    if (e.path().filename().string().rfind("python3", 0) == 0 &&
        std::filesystem::exists(candidate)) {
      os_py = candidate.string();
    }
  }
  if (os_py.empty()) GTEST_SKIP() << "no /usr/lib/python3.N/os.py here";
  bool inside = false;
  for (const std::string& r : *roots) inside |= os_py.rfind(r + "/", 0) == 0;
  EXPECT_TRUE(inside) << os_py << " is in none of " << roots->size() << " roots";
}

TEST(PythonRootsTest, AnInterpreterThatFailsIsNamed) {
  absl::StatusOr<std::vector<std::string>> roots = PythonRoots("/bin/false");
  ASSERT_FALSE(roots.ok());
  EXPECT_THAT(std::string(roots.status().message()), ::testing::HasSubstr("/bin/false"));
}

}  // namespace
}  // namespace ptxbench::runner
