// What `ptxbench submit` gathers from a spec (references.h), in each form.
#include "experiment_spec/references.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/gpu_arch.h"

namespace ptxbench::experiment_spec {
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
  EXPECT_FALSE(r.agent_mode);
  EXPECT_EQ(r.language, "cuda");
  EXPECT_TRUE(ReferencesOf(R"({"mode": "agent", "agent": {}})").agent_mode);
  // The language the hub's tags are checked against at submit (a triton-*
  // tag needs "language": "triton").
  EXPECT_EQ(ReferencesOf(R"({"language": "triton"})").language, "triton");
  EXPECT_EQ(ReferencesOf(R"({"language": 3})").language, "cuda");
}

// PTXBench's coding-agent experiment.json: the runs' tags (and extra tags),
// the hub and its documents' root, the TVM-FFI example, and what ptxbench
// ignores, each with why.
TEST(SpecReferencesTest, APtxbenchAgentExperimentNamesItsHubExampleAndIgnoredFields) {
  const SpecReferences r = ReferencesOf(R"({"agent": "codex", "prompt_hub": "ctx/hub.json",
      "prompt_files_root": ".", "tvm_ffi_example": "ex/wrapper.cu", "experiment_root": "out",
      "watch_interval": 0.2, "runs": [{"run_id": "a", "prompt_tag": "t1"},
      {"run_id": "b", "prompt_tag": "t2", "extra_user_prompt_tag": "t3"}, 7]})");
  EXPECT_TRUE(r.agent_mode);
  EXPECT_EQ(r.hub, "ctx/hub.json");
  EXPECT_EQ(r.hub_documents, ".");
  EXPECT_THAT(r.prompt_tags, ElementsAre("t1", "t2", "t3"));
  EXPECT_THAT(r.files, ElementsAre(FieldsAre("tvm_ffi_example", "ex/wrapper.cu")));
  EXPECT_THAT(r.ignored, ElementsAre(::testing::StartsWith("experiment_root: "),
                                     ::testing::StartsWith("watch_interval: ")));
}

TEST(SpecReferencesTest, AListNamesItsItemsFilesInOrder) {
  const SpecReferences r = ReferencesOf(R"([
      {"prompt_tag": "t1", "test_path": "tests/w.py"},
      "not an item",
      {"prompt_tag": "t2", "error_kernel_path": "k.cu", "error_log_path": "k.log"}])");
  EXPECT_EQ(r.name, "");
  EXPECT_THAT(r.prompt_tags, ElementsAre("t1", "t2"));
  EXPECT_THAT(r.files, ElementsAre(FieldsAre("item [0]: test_path", "tests/w.py"),
                                   FieldsAre("item [2]: error_kernel_path", "k.cu"),
                                   FieldsAre("item [2]: error_log_path", "k.log")));
  EXPECT_FALSE(r.agent_mode);
  EXPECT_EQ(r.architectures, DefaultArchitectures());
}

TEST(SpecReferencesTest, APlanNamesItsEntriesFiles) {
  const SpecReferences r = ReferencesOf(
      R"({"config": {}, "plan": [{"exp_index": 0, "prompt_tag": "p", "test_path": "a.py"}]})");
  EXPECT_THAT(r.files, ElementsAre(FieldsAre("item [0]: test_path", "a.py")));
  EXPECT_THAT(r.prompt_tags, ElementsAre("p"));
}

TEST(SpecReferencesTest, AListsObjectFormNamesItsItemsFilesAndItsMode) {
  const SpecReferences r = ReferencesOf(R"({"name": "fix", "mode": "agent", "items": [
      {"prompt_tag": "t", "error_kernel_path": "k.cu", "error_log_path": "k.log"}]})");
  EXPECT_EQ(r.name, "fix");
  EXPECT_TRUE(r.agent_mode);
  EXPECT_THAT(r.prompt_tags, ElementsAre("t"));
  EXPECT_THAT(r.files, ElementsAre(FieldsAre("item [0]: error_kernel_path", "k.cu"),
                                   FieldsAre("item [0]: error_log_path", "k.log")));
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
}  // namespace ptxbench::experiment_spec
