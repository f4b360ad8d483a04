// What `ptxbench submit` gathers from a spec (references.h), in each form.
#include "scheduler/spec/references.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/gpu_arch.h"

namespace ptxbench::scheduler {
namespace {

using ::testing::ElementsAre;
using ::testing::FieldsAre;
using ::testing::IsEmpty;

TEST(SpecReferencesTest, AMatrixNamesItsTagsTargetsAndName) {
  const SpecReferences r = ReferencesOf(R"({"name": "m1", "prompt_tags": ["a", "b", 3],
      "architectures": ["sm_100"], "models": ["x"]})");
  EXPECT_EQ(r.name, "m1");
  EXPECT_THAT(r.prompt_tags, ElementsAre("a", "b"));
  EXPECT_THAT(r.architectures, ElementsAre("sm_100"));
  EXPECT_THAT(r.files, IsEmpty());
}

TEST(SpecReferencesTest, AListNamesItsItemsFilesInOrder) {
  const SpecReferences r = ReferencesOf(R"([
      {"prompt_tag": "t1", "test_path": "tests/w.py"},
      "not an item",
      {"prompt_tag": "t2", "error_kernel_path": "k.cu", "error_log_path": "k.log"}])");
  EXPECT_EQ(r.name, "");
  EXPECT_THAT(r.prompt_tags, ElementsAre("t1", "t2"));
  EXPECT_THAT(r.files, ElementsAre(FieldsAre(0, "test_path", "tests/w.py"),
                                   FieldsAre(2, "error_kernel_path", "k.cu"),
                                   FieldsAre(2, "error_log_path", "k.log")));
  EXPECT_EQ(r.architectures, DefaultArchitectures());
}

TEST(SpecReferencesTest, APlanNamesItsEntriesFiles) {
  const SpecReferences r = ReferencesOf(
      R"({"config": {}, "plan": [{"exp_index": 0, "prompt_tag": "p", "test_path": "a.py"}]})");
  EXPECT_THAT(r.files, ElementsAre(FieldsAre(0, "test_path", "a.py")));
  EXPECT_THAT(r.prompt_tags, ElementsAre("p"));
}

// What it cannot make sense of names nothing: the scheduler judges the spec.
TEST(SpecReferencesTest, MalformedSpecsNameNothing) {
  for (const char* text : {"", "{", "42", R"({"architectures": ["sm_1"]})"}) {
    const SpecReferences r = ReferencesOf(text);
    EXPECT_THAT(r.files, IsEmpty()) << text;
    EXPECT_THAT(r.prompt_tags, IsEmpty()) << text;
    EXPECT_EQ(r.architectures, DefaultArchitectures()) << text;
  }
}

}  // namespace
}  // namespace ptxbench::scheduler
