#include "workloads/reference/testing/attention_fp32.h"

#include <cmath>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"

namespace ptxbench::reference::testing {
namespace {

constexpr int kThreads = 128;  // a multiple of 32

struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};

// Every thread gets op over all threads' values. `scratch` holds 32 floats.
template <typename Op>
__device__ float BlockReduce(float value, float* scratch, Op op) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    value = op(value, __shfl_xor_sync(0xffffffffu, value, offset));
  }
  __syncthreads();  // scratch may still be read by a previous reduction
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = value;
  __syncthreads();
  value = scratch[0];
  for (int w = 1; w < static_cast<int>(blockDim.x / 32); ++w) value = op(value, scratch[w]);
  return value;
}

__device__ float Dot(const float* a, const __nv_bfloat16* b, int d) {
  float acc = 0.0f;
  for (int t = 0; t < d; ++t) acc = fmaf(a[t], __bfloat162float(b[t]), acc);
  return acc;
}

__device__ float Dot(const __nv_bfloat16* a, const float* b, int d) { return Dot(b, a, d); }

// One block per (query row i, batch*head). Scores of the row in shared memory.
__global__ void ForwardRowKernel(const __nv_bfloat16* __restrict__ q,
                                 const __nv_bfloat16* __restrict__ k,
                                 const __nv_bfloat16* __restrict__ v, float* __restrict__ o,
                                 float* __restrict__ lse, int s, int d, bool causal, float scale) {
  extern __shared__ float smem[];
  float* p = smem;          // [s]
  float* qi = p + s;        // [d]
  float* scratch = qi + d;  // [32]
  const int i = blockIdx.x;
  const int64_t head = static_cast<int64_t>(blockIdx.y) * s * d;
  const int64_t row = static_cast<int64_t>(blockIdx.y) * s + i;
  for (int t = threadIdx.x; t < d; t += blockDim.x) qi[t] = __bfloat162float(q[row * d + t]);
  __syncthreads();
  const int n = causal ? i + 1 : s;
  float local_max = -INFINITY;
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    p[j] = scale * Dot(qi, k + head + static_cast<int64_t>(j) * d, d);
    local_max = fmaxf(local_max, p[j]);
  }
  const float m = BlockReduce(local_max, scratch, MaxOp{});
  float local_sum = 0.0f;
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    p[j] = expf(p[j] - m);
    local_sum += p[j];
  }
  const float l = BlockReduce(local_sum, scratch, SumOp{});
  __syncthreads();
  for (int t = threadIdx.x; t < d; t += blockDim.x) {
    float acc = 0.0f;
    for (int j = 0; j < n; ++j) {
      acc = fmaf(p[j], __bfloat162float(v[head + static_cast<int64_t>(j) * d + t]), acc);
    }
    o[row * d + t] = acc / l;
  }
  if (threadIdx.x == 0) lse[row] = m + logf(l);
}

// One block per query row: D_i = dO_i·O_i, dS_ij = P_ij (dO_i·V_j - D_i),
// dQ_i = scale * sum_j dS_ij K_j.
__global__ void BackwardRowKernel(const __nv_bfloat16* __restrict__ q,
                                  const __nv_bfloat16* __restrict__ k,
                                  const __nv_bfloat16* __restrict__ v,
                                  const __nv_bfloat16* __restrict__ d_o,
                                  const float* __restrict__ o, const float* __restrict__ lse,
                                  float* __restrict__ delta, float* __restrict__ dq, int s, int d,
                                  bool causal, float scale) {
  extern __shared__ float smem[];
  float* ds = smem;          // [s]
  float* qi = ds + s;        // [d]
  float* doi = qi + d;       // [d]
  float* scratch = doi + d;  // [32]
  const int i = blockIdx.x;
  const int64_t head = static_cast<int64_t>(blockIdx.y) * s * d;
  const int64_t row = static_cast<int64_t>(blockIdx.y) * s + i;
  float part = 0.0f;
  for (int t = threadIdx.x; t < d; t += blockDim.x) {
    qi[t] = __bfloat162float(q[row * d + t]);
    doi[t] = __bfloat162float(d_o[row * d + t]);
    part = fmaf(doi[t], o[row * d + t], part);
  }
  const float di = BlockReduce(part, scratch, SumOp{});  // also orders qi/doi writes
  if (threadIdx.x == 0) delta[row] = di;
  const float li = lse[row];
  const int n = causal ? i + 1 : s;
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    const int64_t kv = head + static_cast<int64_t>(j) * d;
    const float pij = expf(scale * Dot(qi, k + kv, d) - li);
    ds[j] = pij * (Dot(doi, v + kv, d) - di);
  }
  __syncthreads();
  for (int t = threadIdx.x; t < d; t += blockDim.x) {
    float acc = 0.0f;
    for (int j = 0; j < n; ++j) {
      acc = fmaf(ds[j], __bfloat162float(k[head + static_cast<int64_t>(j) * d + t]), acc);
    }
    dq[row * d + t] = scale * acc;
  }
}

// One block per key row j: dK_j = scale * sum_i dS_ij Q_i, dV_j = sum_i P_ij dO_i.
__global__ void BackwardColumnKernel(const __nv_bfloat16* __restrict__ q,
                                     const __nv_bfloat16* __restrict__ k,
                                     const __nv_bfloat16* __restrict__ v,
                                     const __nv_bfloat16* __restrict__ d_o,
                                     const float* __restrict__ lse, const float* __restrict__ delta,
                                     float* __restrict__ dk, float* __restrict__ dv, int s, int d,
                                     bool causal, float scale) {
  extern __shared__ float smem[];
  float* ds = smem;    // [s]
  float* p = ds + s;   // [s]
  float* kj = p + s;   // [d]
  float* vj = kj + d;  // [d]
  const int j = blockIdx.x;
  const int64_t head = static_cast<int64_t>(blockIdx.y) * s * d;
  const int64_t row = static_cast<int64_t>(blockIdx.y) * s + j;
  const int64_t stats = static_cast<int64_t>(blockIdx.y) * s;
  for (int t = threadIdx.x; t < d; t += blockDim.x) {
    kj[t] = __bfloat162float(k[row * d + t]);
    vj[t] = __bfloat162float(v[row * d + t]);
  }
  __syncthreads();
  const int first = causal ? j : 0;
  for (int i = first + threadIdx.x; i < s; i += blockDim.x) {
    const int64_t qo = head + static_cast<int64_t>(i) * d;
    const float pij = expf(scale * Dot(q + qo, kj, d) - lse[stats + i]);
    p[i] = pij;
    ds[i] = pij * (Dot(d_o + qo, vj, d) - delta[stats + i]);
  }
  __syncthreads();
  for (int t = threadIdx.x; t < d; t += blockDim.x) {
    float acc_k = 0.0f, acc_v = 0.0f;
    for (int i = first; i < s; ++i) {
      const int64_t qo = head + static_cast<int64_t>(i) * d + t;
      acc_k = fmaf(ds[i], __bfloat162float(q[qo]), acc_k);
      acc_v = fmaf(p[i], __bfloat162float(d_o[qo]), acc_v);
    }
    dk[row * d + t] = scale * acc_k;
    dv[row * d + t] = acc_v;
  }
}
absl::Status CudaStatus(cudaError_t err, absl::string_view what) {
  if (err == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat(what, ": ", cudaGetErrorName(err), ": ", cudaGetErrorString(err)));
}

// Launches `kernel` on a (S, B*H) grid with `smem_bytes` of dynamic shared
// memory, opting in above the 48 KiB default.
template <typename Kernel, typename... Args>
absl::Status LaunchRows(Kernel kernel, const char* name, const AttentionShape& shape,
                        size_t smem_bytes, cudaStream_t stream, Args... args) {
  if (smem_bytes > 48 * 1024) {
    PTXB_RETURN_IF_ERROR(CudaStatus(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(smem_bytes)),
        absl::StrCat(name, ": ", smem_bytes, " B of shared memory (S=", shape.seq, ")")));
  }
  const dim3 grid(shape.seq, shape.batch * shape.heads);
  kernel<<<grid, kThreads, smem_bytes, stream>>>(args...);
  return CudaStatus(cudaGetLastError(), absl::StrCat(name, " launch"));
}

}  // namespace

absl::Status AttentionForwardFp32(const AttentionShape& shape, const __nv_bfloat16* q,
                                  const __nv_bfloat16* k, const __nv_bfloat16* v, float* o,
                                  float* lse, cudaStream_t stream) {
  PTXB_RETURN_IF_ERROR(ValidateAttentionShape(shape));
  const size_t smem = (static_cast<size_t>(shape.seq) + shape.head_dim + 32) * sizeof(float);
  return LaunchRows(ForwardRowKernel, "ForwardRowKernel", shape, smem, stream, q, k, v, o, lse,
                    shape.seq, shape.head_dim, shape.causal, AttentionScale(shape));
}

absl::Status AttentionBackwardFp32(const AttentionShape& shape, const __nv_bfloat16* q,
                                   const __nv_bfloat16* k, const __nv_bfloat16* v,
                                   const __nv_bfloat16* d_o, const float* lse, float* dq, float* dk,
                                   float* dv, cudaStream_t stream) {
  PTXB_RETURN_IF_ERROR(ValidateAttentionShape(shape));
  const size_t rows = static_cast<size_t>(shape.batch) * shape.heads * shape.seq;
  const int s = shape.seq, d = shape.head_dim;
  const float scale = AttentionScale(shape);
  float* o = nullptr;
  float* own_lse = nullptr;
  float* delta = nullptr;
  absl::Status status;
  status.Update(
      CudaStatus(cudaMallocAsync(reinterpret_cast<void**>(&o), rows * d * sizeof(float), stream),
                 "cudaMallocAsync(fp32 O)"));
  if (status.ok()) {
    status.Update(CudaStatus(
        cudaMallocAsync(reinterpret_cast<void**>(&own_lse), rows * sizeof(float), stream),
        "cudaMallocAsync(fp32 LSE)"));
  }
  if (status.ok()) {
    status.Update(
        CudaStatus(cudaMallocAsync(reinterpret_cast<void**>(&delta), rows * sizeof(float), stream),
                   "cudaMallocAsync(rowsum(dO*O))"));
  }
  if (status.ok()) status.Update(AttentionForwardFp32(shape, q, k, v, o, own_lse, stream));
  if (status.ok()) {
    const size_t smem = (static_cast<size_t>(s) + 2 * d + 32) * sizeof(float);
    status.Update(LaunchRows(BackwardRowKernel, "BackwardRowKernel", shape, smem, stream, q, k, v,
                             d_o, static_cast<const float*>(o), lse, delta, dq, s, d, shape.causal,
                             scale));
  }
  if (status.ok()) {
    const size_t smem = (2 * static_cast<size_t>(s) + 2 * d) * sizeof(float);
    status.Update(LaunchRows(BackwardColumnKernel, "BackwardColumnKernel", shape, smem, stream, q,
                             k, v, d_o, lse, static_cast<const float*>(delta), dk, dv, s, d,
                             shape.causal, scale));
  }
  for (float* p : {o, own_lse, delta}) {
    if (p != nullptr) cudaFreeAsync(p, stream);
  }
  return status;
}

}  // namespace ptxbench::reference::testing
