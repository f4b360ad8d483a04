#include "agent_gateway/simulated/model.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/hash.h"

namespace ptxbench::agent_gateway {
namespace {

constexpr int kBlockSizes[] = {64, 128, 256, 512};
constexpr int kUnrolls[] = {1, 2, 4, 8};
// The element-wise body of the generated kernel, per variant.
constexpr const char* kBodies[] = {
    "y[i] = x[i] * 1.25f;",
    "y[i] = fmaxf(x[i], 0.0f);",
    "y[i] = x[i] / (1.0f + __expf(-x[i]));",
    "y[i] = __fmaf_rn(x[i], x[i], 1.0f);",
};

std::string Kernel(uint64_t h) {
  const std::string tag = absl::StrFormat("%08x", static_cast<uint32_t>(h));
  const int block = kBlockSizes[(h >> 32) % 4];
  const int unroll = kUnrolls[(h >> 36) % 4];
  const char* body = kBodies[(h >> 40) % 4];
  // About a third of the variants pretend to use Hopper instructions, so the
  // census and the instruction warning see both cases.
  const bool hopper = (h >> 44) % 3 == 0;
  return absl::StrFormat(
      "#include \"ptxbench/kernel_abi.h\"\n"
      "\n"
      "// variant %s: block=%d, unroll=%d\n"
      "__global__ void ptxb_sim_%s(const float* __restrict__ x, float* __restrict__ y,\n"
      "                            int64_t n) {\n"
      "%s"
      "  const int64_t base =\n"
      "      (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * %d;\n"
      "#pragma unroll\n"
      "  for (int u = 0; u < %d; ++u) {\n"
      "    const int64_t i = base + u;\n"
      "    if (i < n) %s\n"
      "  }\n"
      "}\n"
      "\n"
      "PTXB_EXPORT void run(const float* x, float* y, int64_t n, cudaStream_t stream) {\n"
      "  const int64_t per_block = %d * %d;\n"
      "  const unsigned grid = static_cast<unsigned>((n + per_block - 1) / per_block);\n"
      "  ptxb_sim_%s<<<grid, %d, 0, stream>>>(x, y, n);\n"
      "}\n",
      tag, block, unroll, tag,
      hopper ? "  asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\");\n" : "", unroll,
      unroll, body, block, unroll, tag, block);
}

// The Triton variant of Kernel(h): a kernel.py with a @triton.jit kernel
// and its destination-passing run().
std::string TritonKernel(uint64_t h) {
  const std::string tag = absl::StrFormat("%08x", static_cast<uint32_t>(h));
  const int block = kBlockSizes[(h >> 32) % 4];
  return absl::StrFormat(
      "import torch\n"
      "import triton\n"
      "import triton.language as tl\n"
      "\n"
      "# variant %s: BLOCK=%d\n"
      "@triton.jit\n"
      "def ptxb_sim_%s(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
      "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
      "    mask = offs < n\n"
      "    x = tl.load(x_ptr + offs, mask=mask)\n"
      "    tl.store(y_ptr + offs, x * 1.25, mask=mask)\n"
      "\n"
      "def run(x, y):\n"
      "    n = x.numel()\n"
      "    ptxb_sim_%s[(triton.cdiv(n, %d),)](x, y, n, BLOCK=%d)\n",
      tag, block, tag, tag, block, block);
}

// Whether the task asks for Triton: its prompt asks for a ```python block
// (prompts/prompts.cc, RenderTaskPrompt), which no other language's does.
bool AsksForTriton(const ptxbench::v1::LlmRequest& request) {
  for (const auto& m : request.messages()) {
    if (m.role() == "user") return absl::StrContains(m.content(), "```python block");
  }
  return false;
}

int64_t EstimateTokens(size_t chars) { return static_cast<int64_t>(chars / 4); }

}  // namespace

ptxbench::v1::LlmResponse SimulatedModel::Answer(const ptxbench::v1::LlmRequest& request,
                                                 absl::string_view trajectory_id, int turn) const {
  const uint64_t h = StableHash64(
      absl::StrCat("ptxb-sim-model/", seed_, "/", request.model(), "/", trajectory_id, "/", turn));
  std::string text;
  if (h % 100 < 5) {
    text = absl::StrFormat(
        "I need to reconsider the tiling (option %c) before writing more code; the approach "
        "above should work once the indexing is fixed.",
        static_cast<char>('A' + (h >> 8) % 26));
  } else if (AsksForTriton(request)) {
    text = absl::StrCat("Here is a Triton kernel for turn ", turn, " with blocks of ",
                        kBlockSizes[(h >> 32) % 4], " elements.\n\n```python\n", TritonKernel(h),
                        "```\n");
  } else {
    text = absl::StrCat("Here is a kernel for turn ", turn, " using ", kBlockSizes[(h >> 32) % 4],
                        " threads per block and ", kUnrolls[(h >> 36) % 4],
                        "x unrolling.\n\n```cpp\n", Kernel(h), "```\n");
  }

  size_t input_chars = 0;
  for (const auto& m : request.messages()) input_chars += m.content().size();
  ptxbench::v1::LlmResponse response;
  response.mutable_usage()->set_input_tokens(EstimateTokens(input_chars));
  response.mutable_usage()->set_output_tokens(EstimateTokens(text.size()));
  response.set_text(std::move(text));
  response.set_cost_usd(0);
  response.set_finish_reason("stop");
  response.set_provider("simulated");
  response.set_simulated(true);
  return response;
}

}  // namespace ptxbench::agent_gateway
