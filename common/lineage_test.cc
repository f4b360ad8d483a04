// An experiment's lineage in one line (lineage.h).
#include "common/lineage.h"

#include <gtest/gtest.h>

namespace ptxbench {
namespace {

TEST(LineageTest, NamesTheStageAndWhatItWasMadeFrom) {
  EXPECT_EQ(LineageText(R"({"pipeline": "fixit", "stage": "repairs", "kind": "derive",
      "stage_id": "st_1", "from": [{"stage": "failed", "kind": "select", "stage_id": "st_0"}],
      "experiments": ["base"]})"),
            "stage repairs (derive, st_1) of pipeline fixit, from failed (select) <- experiment "
            "base");
  EXPECT_EQ(LineageText(R"({"pipeline": "p", "stage": "e", "kind": "evaluate",
      "stage_id": "st_2", "role": "tuned"})"),
            "stage e (evaluate, st_2) of pipeline p, the tuned");
  EXPECT_EQ(LineageText(""), "");
  EXPECT_EQ(LineageText("[1]"), "");
}

}  // namespace
}  // namespace ptxbench
