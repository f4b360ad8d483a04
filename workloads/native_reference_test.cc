#include "workloads/native_reference.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "workloads/registry.h"
#include "workloads/testing/datasets.h"

namespace ptxbench::workloads {
namespace {

using Json = nlohmann::ordered_json;

Definition Bundled(const std::string& name) {
  auto registry = DefinitionRegistry::Load({});
  EXPECT_TRUE(registry.ok()) << registry.status();
  auto d = (*registry)->Find(name);
  EXPECT_TRUE(d.ok()) << d.status();
  return **d;
}

// The bundled definition `name` with `edit` applied to its JSON.
template <typename Edit>
Definition Edited(const std::string& name, Edit edit) {
  Json doc = Json::parse(Bundled(name).json);
  edit(doc);
  auto d = ParseDefinition(doc.dump(), name + ".json");
  EXPECT_TRUE(d.ok()) << d.status();
  return *d;
}

// A FlashInfer-Trace dataset's RMSNorm: only a PyTorch reference computes it.
Definition RmsNorm() {
  auto registry = DefinitionRegistry::Load({{testing::RmsNormDataset()}});
  EXPECT_TRUE(registry.ok()) << registry.status();
  auto d = (*registry)->Find("rmsnorm_h4096");
  EXPECT_TRUE(d.ok()) << d.status();
  return **d;
}

std::string Message(const absl::StatusOr<std::string>& s) {
  return std::string(s.status().message());
}

TEST(NativeReferenceTest, TheBundledDefinitionsFit) {
  EXPECT_EQ(NativeReference(Bundled("gemm_n7168_k5120")).value_or(""), "cuBLAS");
  for (const char* name : {"mha_with_lse_d128", "mha_with_lse_d128_causal", "mha_bwd_d128",
                           "mha_bwd_d128_causal"}) {
    EXPECT_EQ(NativeReference(Bundled(name)).value_or(""), "cuDNN SDPA") << name;
    EXPECT_EQ(ChooseReference(Bundled(name)).value_or(ReferenceKind::kPyTorch),
              ReferenceKind::kNative);
  }
}

TEST(NativeReferenceTest, AnOperatorWithoutANativeReferenceIsNamed) {
  const absl::StatusOr<std::string> native = NativeReference(RmsNorm());
  EXPECT_EQ(native.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(Message(native),
            "definition rmsnorm_h4096 (op_type rmsnorm): this build has no native reference "
            "for it");
  EXPECT_EQ(ChooseReference(RmsNorm()).value_or(ReferenceKind::kNative), ReferenceKind::kPyTorch);
}

TEST(NativeReferenceTest, AGemmInFloat16DoesNotFit) {
  const Definition d = Edited("gemm_n7168_k5120", [](Json& doc) {
    doc["inputs"]["A"]["dtype"] = "float16";
  });
  EXPECT_EQ(Message(NativeReference(d)),
            "definition gemm_n7168_k5120: the GEMM reference computes C[M,N] = A[M,K]·B[N,K]^T in "
            "bfloat16 only");
  // Nor one whose B is not [N,K].
  const Definition transposed = Edited("gemm_n7168_k5120", [](Json& doc) {
    doc["inputs"]["B"]["shape"] = {"K", "N"};
  });
  EXPECT_EQ(NativeReference(transposed).status().code(), absl::StatusCode::kUnimplemented);
}

TEST(NativeReferenceTest, ACausalNameWithoutACausalTagDoesNotFit) {
  const Definition d = Edited("mha_with_lse_d128_causal", [](Json& doc) {
    doc["tags"] = {"hopper", "bf16", "attention"};
  });
  EXPECT_EQ(Message(NativeReference(d)),
            "definition mha_with_lse_d128_causal: the name says causal but no tag does "
            "(\"causal:true\"); the native attention reference does not guess");
}

TEST(NativeReferenceTest, AttentionOfOtherShapesOrDirectionsDoesNotFit) {
  const std::string message =
      "definition mha_bwd_d128: the attention reference computes [B,H,S,D] bfloat16 attention "
      "with a [B,H,S] float32 LSE (forward: Q,K,V -> O,LSE; backward: Q,K,V,O,dO,L -> dQ,dK,dV)";
  // A backward definition without its backward tag reads as a forward one.
  const Definition untagged = Edited("mha_bwd_d128", [](Json& doc) {
    doc["tags"] = {"hopper", "bf16", "attention"};
  });
  EXPECT_EQ(Message(NativeReference(untagged)), message);
  const Definition lse16 = Edited("mha_bwd_d128", [](Json& doc) {
    doc["inputs"]["L"]["dtype"] = "float16";
  });
  EXPECT_EQ(Message(NativeReference(lse16)), message);
}

TEST(ChooseReferenceTest, ADefinitionWithNeitherReferenceIsRefusedByName) {
  Definition d = RmsNorm();
  d.reference = "  \n";
  const absl::StatusOr<ReferenceKind> kind = ChooseReference(d);
  EXPECT_EQ(kind.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(std::string(kind.status().message()),
            "definition rmsnorm_h4096 has no reference to evaluate against: no native reference "
            "fits (definition rmsnorm_h4096 (op_type rmsnorm): this build has no native reference "
            "for it) and its \"reference\" holds no PyTorch code");
}

}  // namespace
}  // namespace ptxbench::workloads
