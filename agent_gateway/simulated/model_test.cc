#include "agent_gateway/simulated/model.h"

#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

// Suite names start with "simulated_" so that `ctest -R simulated` selects them.
namespace ptxbench::agent_gateway {
namespace {

using ::google::protobuf::util::MessageDifferencer;

v1::LlmRequest Request(const std::string& model = "model-a") {
  v1::LlmRequest r;
  r.set_model(model);
  auto* system = r.add_messages();
  system->set_role("system");
  system->set_content(std::string(400, 's'));
  auto* user = r.add_messages();
  user->set_role("user");
  user->set_content(std::string(41, 'u'));
  return r;
}

bool HasCode(const v1::LlmResponse& r) { return absl::StrContains(r.text(), "```cpp\n"); }

TEST(simulated_model, SameKeyGivesTheSameAnswer) {
  SimulatedModel model(5);
  for (int turn = 0; turn < 10; ++turn) {
    EXPECT_TRUE(MessageDifferencer::Equals(model.Answer(Request(), "traj-1", turn),
                                           SimulatedModel(5).Answer(Request(), "traj-1", turn)));
  }
}

TEST(simulated_model, KernelTextDiffersPerTurnTrajectoryModelAndSeed) {
  SimulatedModel model(5);
  std::set<std::string> texts;
  int answers = 0;
  for (int turn = 0; turn < 20; ++turn) {
    for (const char* traj : {"traj-1", "traj-2"}) {
      for (const char* m : {"model-a", "model-b"}) {
        v1::LlmResponse r = model.Answer(Request(m), traj, turn);
        if (!HasCode(r)) continue;  // the no-code answers need not differ
        texts.insert(r.text());
        ++answers;
      }
    }
  }
  EXPECT_GT(answers, 60);
  EXPECT_EQ(static_cast<int>(texts.size()), answers);
  EXPECT_NE(SimulatedModel(5).Answer(Request(), "t", 0).text(),
            SimulatedModel(6).Answer(Request(), "t", 0).text());
}

TEST(simulated_model, AnswersHoldOnePlausibleKernelBlock) {
  SimulatedModel model(1);
  for (int turn = 0; turn < 100; ++turn) {
    v1::LlmResponse r = model.Answer(Request(), "traj-k", turn);
    if (!HasCode(r)) continue;
    const std::string& t = r.text();
    EXPECT_FALSE(absl::StartsWith(t, "```"));  // prose first
    EXPECT_TRUE(absl::StrContains(t, "#include \"ptxbench/kernel_abi.h\""));
    EXPECT_TRUE(absl::StrContains(t, "__global__ void ptxb_sim_"));
    EXPECT_TRUE(absl::StrContains(t, "PTXB_EXPORT void run("));
    EXPECT_TRUE(absl::EndsWith(t, "}\n```\n"));
    size_t fences = 0;
    for (size_t pos = t.find("```"); pos != std::string::npos; pos = t.find("```", pos + 3)) {
      ++fences;
    }
    EXPECT_EQ(fences, 2u);
  }
}

// A Triton task (its prompt asks for a ```python block) gets a Triton
// kernel.py, which Triton extraction takes (scheduler/feedback/extract.h):
// @triton.jit and a run().
TEST(simulated_model, ATritonTaskGetsATritonKernel) {
  SimulatedModel model(1);
  v1::LlmRequest request = Request();
  request.mutable_messages(1)->set_content(
      "Answer with exactly one ```python block holding the complete kernel.py.");
  int with_code = 0;
  for (int turn = 0; turn < 20; ++turn) {
    const std::string t = model.Answer(request, "traj-t", turn).text();
    if (!absl::StrContains(t, "```python\n")) continue;
    ++with_code;
    EXPECT_TRUE(absl::StrContains(t, "@triton.jit\ndef ptxb_sim_")) << t;
    EXPECT_TRUE(absl::StrContains(t, "def run(x, y):")) << t;
    EXPECT_FALSE(absl::StrContains(t, "```cpp")) << t;
  }
  EXPECT_GE(with_code, 15);
  EXPECT_FALSE(absl::StrContains(model.Answer(Request(), "traj-t", 0).text(), "```python"));
}

TEST(simulated_model, AboutFivePercentHaveNoCode) {
  SimulatedModel model(9);
  int no_code = 0;
  const int n = 4000;
  for (int i = 0; i < n; ++i) {
    no_code += !HasCode(model.Answer(Request(), absl::StrCat("traj-", i), 0));
  }
  EXPECT_NEAR(no_code / double{n}, 0.05, 0.015);
}

TEST(simulated_model, LabelledAndMetered) {
  v1::LlmResponse r = SimulatedModel(1).Answer(Request(), "traj", 3);
  EXPECT_TRUE(r.simulated());
  EXPECT_EQ(r.provider(), "simulated");
  EXPECT_EQ(r.finish_reason(), "stop");
  EXPECT_EQ(r.cost_usd(), 0);
  EXPECT_EQ(r.usage().input_tokens(), 441 / 4);
  EXPECT_EQ(r.usage().output_tokens(), static_cast<int64_t>(r.text().size() / 4));
}

}  // namespace
}  // namespace ptxbench::agent_gateway
