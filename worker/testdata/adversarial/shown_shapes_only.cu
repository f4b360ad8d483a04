// Attack: a GEMM tuned to the shapes its model was shown. It computes the
// right answer for M = 70 (the workload it was shown) and, for any other M,
// skips the rows past 70 (a tile loop written for the shown shape).
// Expected: PASSED on the shown workload and INCORRECT_NUMERICAL on the
// held-out one; the result is not correct, the part a model is shown is
// (verdict::ShownPart; docs/FORMATS.md, "Held-out workloads").
// (The test prepends simple_gemm.inc: Gemm() is the honest work.)

PTXB_EXPORT void run(const ptxb::Tensor& A, const ptxb::Tensor& B, ptxb::Tensor& C,
                     cudaStream_t stream) {
  if (A.sizes[0] == 70) return Gemm(A, B, C, stream);
  ptxb::Tensor first = A, out = C;
  first.sizes[0] = out.sizes[0] = 70;  // the rows past 70 keep their poison
  Gemm(first, B, out, stream);
}
