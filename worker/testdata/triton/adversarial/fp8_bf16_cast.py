# Adversarial submission for gemm_fp8_n4096_k4096 (issue 50, fallback suite;
# the definition is worker/testdata/triton/fp8_dataset): the FP8 inputs are
# cast to bfloat16 and multiplied by torch.matmul (cuBLAS's bf16 GEMM), the
# way KernelBench-Hard found FP8 "solutions" fast. The numbers are right (an
# e4m3 value is exact in bf16); ptxbench must call it LIBRARY_FALLBACK and
# name the cast and GEMM kernels.
import torch
import triton
import triton.language as tl


def run(A, B, C):
    C.copy_(torch.matmul(A.to(torch.bfloat16), B.to(torch.bfloat16).t()))
