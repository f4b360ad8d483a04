// A correct, simple causal attention forward for mha_with_lse_d128_causal
// (tests): O = softmax(Q K^T / sqrt(D) + causal mask) V, query i attending keys
// j <= i, and LSE = logsumexp over the attended keys (natural log).
// Q, K, V, O: [B, H, S, 128] bf16; LSE: [B, H, S] fp32.
// fp32 CUDA-core math throughout: a block of 256 threads owns 64 query rows
// and walks 64-key tiles of K and V through shared memory with an online
// softmax (in the log2 domain). No tensor cores.
#include <cuda_bf16.h>

#include "ptxbench/kernel_abi.h"

constexpr bool kCausal = true;

constexpr int kD = 128;        // head dimension
constexpr int kBlockQ = 64;    // query rows per block
constexpr int kBlockK = 64;    // keys per tile
constexpr int kThreads = 256;  // 16 x 16: ty owns 4 rows, tx owns 4 keys / 8 columns
constexpr int kT = 68;         // row stride (floats) of a transposed [kD][64] tile
constexpr int kTileT = kD * kT;
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;
constexpr size_t kSmemBytes = (size_t)(2 * kTileT + kBlockK * kT) * sizeof(float);

// dst[d * kT + r] = src[(row0 + r) * kD + d] for r < 64 (zero past row S - 1).
__device__ __forceinline__ void LoadTransposed(float* dst, const __nv_bfloat16* src, int row0,
                                               int s) {
  for (int idx = threadIdx.x; idx < 64 * (kD / 8); idx += kThreads) {
    const int r = idx % 64, c = idx / 64;
    uint4 raw = make_uint4(0, 0, 0, 0);
    if (row0 + r < s) raw = *reinterpret_cast<const uint4*>(src + (size_t)(row0 + r) * kD + c * 8);
    const __nv_bfloat16* h = reinterpret_cast<const __nv_bfloat16*>(&raw);
#pragma unroll
    for (int e = 0; e < 8; ++e) dst[(c * 8 + e) * kT + r] = __bfloat162float(h[e]);
  }
}

// dst[r * kD + d] = src[(row0 + r) * kD + d] for r < 64 (zero past row S - 1).
__device__ __forceinline__ void LoadNatural(float* dst, const __nv_bfloat16* src, int row0, int s) {
  for (int idx = threadIdx.x; idx < 64 * (kD / 8); idx += kThreads) {
    const int r = idx / (kD / 8), c = idx % (kD / 8);
    uint4 raw = make_uint4(0, 0, 0, 0);
    if (row0 + r < s) raw = *reinterpret_cast<const uint4*>(src + (size_t)(row0 + r) * kD + c * 8);
    const __nv_bfloat16* h = reinterpret_cast<const __nv_bfloat16*>(&raw);
    float4* out = reinterpret_cast<float4*>(dst + r * kD + c * 8);
    out[0] = make_float4(__bfloat162float(h[0]), __bfloat162float(h[1]), __bfloat162float(h[2]),
                         __bfloat162float(h[3]));
    out[1] = make_float4(__bfloat162float(h[4]), __bfloat162float(h[5]), __bfloat162float(h[6]),
                         __bfloat162float(h[7]));
  }
}

__global__ void __launch_bounds__(kThreads, 2)
    attention_fwd(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                  const __nv_bfloat16* __restrict__ v, __nv_bfloat16* __restrict__ o,
                  float* __restrict__ lse, int s, float scale_log2) {
  extern __shared__ float4 smem4[];
  float* smem = reinterpret_cast<float*>(smem4);
  float* qt = smem;             // [kD][kT]: Q tile, transposed
  float* kv = qt + kTileT;      // [kD][kT] K tile transposed, then [64][kD] V tile
  float* pt = kv + kTileT;      // [64 keys][kT]: probabilities, transposed

  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  // Causal: the longest rows first, for a better tail.
  const int qtile = kCausal ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
  const int q0 = qtile * kBlockQ;
  const size_t base = (size_t)blockIdx.y * s * kD;
  q += base;
  k += base;
  v += base;

  LoadTransposed(qt, q, q0, s);

  float acc[4][8];
  float m[4], l[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    m[i] = -INFINITY;
    l[i] = 0.f;
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;
  }

  int num_ktiles = (s + kBlockK - 1) / kBlockK;
  if (kCausal) num_ktiles = min(num_ktiles, (q0 + kBlockQ - 1) / kBlockK + 1);
  for (int kt = 0; kt < num_ktiles; ++kt) {
    const int k0 = kt * kBlockK;
    __syncthreads();  // the previous tile's P V is done with kv and pt
    LoadTransposed(kv, k, k0, s);
    __syncthreads();

    // Scores of rows ty*4+i against keys tx*4+j.
    float sc[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) sc[i][j] = 0.f;
#pragma unroll 8
    for (int d = 0; d < kD; ++d) {
      const float4 a = *reinterpret_cast<const float4*>(qt + d * kT + ty * 4);
      const float4 b = *reinterpret_cast<const float4*>(kv + d * kT + tx * 4);
      const float av[4] = {a.x, a.y, a.z, a.w}, bv[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) sc[i][j] = fmaf(av[i], bv[j], sc[i][j]);
    }

    // Online softmax, log2 domain; the 16 lanes of one ty share its rows.
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int row = q0 + ty * 4 + i;
      float mx = -INFINITY;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int key = k0 + tx * 4 + j;
        const bool valid = key < s && (!kCausal || key <= row);
        sc[i][j] = valid ? sc[i][j] * scale_log2 : -INFINITY;
        mx = fmaxf(mx, sc[i][j]);
      }
#pragma unroll
      for (int off = 1; off < 16; off <<= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
      const float m_new = fmaxf(m[i], mx);
      const float m_use = m_new == -INFINITY ? 0.f : m_new;  // row with nothing attended yet
      const float alpha = exp2f(m[i] - m_use);
      float sum = 0.f;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        sc[i][j] = exp2f(sc[i][j] - m_use);
        sum += sc[i][j];
      }
#pragma unroll
      for (int off = 1; off < 16; off <<= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
      l[i] = l[i] * alpha + sum;
      m[i] = m_new;
#pragma unroll
      for (int j = 0; j < 8; ++j) acc[i][j] *= alpha;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j)
      *reinterpret_cast<float4*>(pt + (tx * 4 + j) * kT + ty * 4) =
          make_float4(sc[0][j], sc[1][j], sc[2][j], sc[3][j]);
    __syncthreads();  // everyone is done reading the K tile
    LoadNatural(kv, v, k0, s);
    __syncthreads();

    // acc[rows ty*4+i][cols tx*4+j and 64+tx*4+j] += P V.
#pragma unroll 4
    for (int kk = 0; kk < kBlockK; ++kk) {
      const float4 p = *reinterpret_cast<const float4*>(pt + kk * kT + ty * 4);
      const float4 v0 = *reinterpret_cast<const float4*>(kv + kk * kD + tx * 4);
      const float4 v1 = *reinterpret_cast<const float4*>(kv + kk * kD + 64 + tx * 4);
      const float pv[4] = {p.x, p.y, p.z, p.w};
      const float vv[8] = {v0.x, v0.y, v0.z, v0.w, v1.x, v1.y, v1.z, v1.w};
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(pv[i], vv[j], acc[i][j]);
    }
  }

#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int row = q0 + ty * 4 + i;
    if (row >= s) continue;
    const float inv = 1.f / l[i];
    __nv_bfloat16* out = o + base + (size_t)row * kD;
    __nv_bfloat162 h[4];
    h[0] = __floats2bfloat162_rn(acc[i][0] * inv, acc[i][1] * inv);
    h[1] = __floats2bfloat162_rn(acc[i][2] * inv, acc[i][3] * inv);
    h[2] = __floats2bfloat162_rn(acc[i][4] * inv, acc[i][5] * inv);
    h[3] = __floats2bfloat162_rn(acc[i][6] * inv, acc[i][7] * inv);
    *reinterpret_cast<uint2*>(out + tx * 4) = *reinterpret_cast<const uint2*>(&h[0]);
    *reinterpret_cast<uint2*>(out + 64 + tx * 4) = *reinterpret_cast<const uint2*>(&h[2]);
    if (tx == 0) lse[(size_t)blockIdx.y * s + row] = m[i] * kLn2 + logf(l[i]);
  }
}

PTXB_EXPORT void run(const ptxb::Tensor& Q, const ptxb::Tensor& K, const ptxb::Tensor& V,
                     ptxb::Tensor& O, ptxb::Tensor& LSE, cudaStream_t stream) {
  const int b = (int)Q.sizes[0], h = (int)Q.sizes[1], s = (int)Q.sizes[2];
  const float scale_log2 = kLog2e / sqrtf((float)Q.sizes[3]);
  cudaFuncSetAttribute(attention_fwd, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)kSmemBytes);
  dim3 grid((s + kBlockQ - 1) / kBlockQ, b * h);
  attention_fwd<<<grid, kThreads, kSmemBytes, stream>>>(
      (const __nv_bfloat16*)Q.data, (const __nv_bfloat16*)K.data, (const __nv_bfloat16*)V.data,
      (__nv_bfloat16*)O.data, (float*)LSE.data, s, scale_log2);
  // PTXB_TEST_SPOIL
}
