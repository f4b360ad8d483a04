// Attack: a GEMM right for standard-normal inputs only. It clamps every
// input to [-8, 8] (a "safe" range for a narrow accumulator, say): no
// standard-normal draw of these sizes reaches 8, so the element checks of
// normal inputs all pass. Expected: INCORRECT_NUMERICAL on the calls whose
// inputs are drawn with outliers or scaled by 64 (docs/MEASUREMENT.md,
// "Input distributions"); the error names the distribution.
// (The test prepends simple_gemm.inc; this kernel is its own.)

__global__ void gemm_clamped(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c,
                             int m, int n, int k) {
  const int row = blockIdx.y * kTile + threadIdx.y;
  const int col = blockIdx.x * kTile + threadIdx.x;
  if (row >= m || col >= n) return;
  float acc = 0.f;
  for (int i = 0; i < k; ++i) {
    const float x = fminf(fmaxf(__bfloat162float(a[(size_t)row * k + i]), -8.f), 8.f);
    const float y = fminf(fmaxf(__bfloat162float(b[(size_t)col * k + i]), -8.f), 8.f);
    acc += x * y;
  }
  c[(size_t)row * n + col] = __float2bfloat16(acc);
}

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  const int m = (int)A.sizes[0], k = (int)A.sizes[1], n = (int)B.sizes[0];
  dim3 block(kTile, kTile), grid((n + kTile - 1) / kTile, (m + kTile - 1) / kTile);
  gemm_clamped<<<grid, block, 0, stream>>>((const __nv_bfloat16*)A.data,
                                           (const __nv_bfloat16*)B.data, (__nv_bfloat16*)C.data,
                                           m, n, k);
}
