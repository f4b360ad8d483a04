"""The PyTorch side of bench/gpu/ipc_reach.sh: tensors of torch's caching allocator
(default or, with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, expandable
segments), each filled with a tag of its kind as ipc_reach_probe reads it, plus a
matmul (cuBLAS workspace) and an attention (its workspaces). Prints "READY <seed>",
the legacy handle of one cudaMalloc allocation of this process (through CuPy, the
same context), then waits for EOF on stdin.

  python3 ipc_reach_torch.py KIND      KIND: 10 default, 11 expandable segments
"""
import sys

import cupy
import torch

kind = int(sys.argv[1])
seed = cupy.cuda.runtime.malloc(1 << 20)
handle = cupy.cuda.runtime.ipcGetMemHandle(seed)
tag_base = 0x5054584200000000
keep = []
for index, numel in enumerate([512, 1 << 17, 1 << 23, 512, 1 << 17]):
    t = torch.empty(numel, dtype=torch.int64, device="cuda")
    t.fill_(tag_base | (kind << 16) | (index + 1))
    keep.append(t)
a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
keep.append(a @ a)
q = torch.randn(1, 8, 1024, 128, device="cuda", dtype=torch.bfloat16)
keep.append(torch.nn.functional.scaled_dot_product_attention(q, q, q))
torch.cuda.synchronize()
print("note: torch", torch.__version__, "allocator", torch.cuda.get_allocator_backend(),
      "expandable" if kind == 11 else "default", flush=True)
print("READY", bytes(handle).hex() if not isinstance(handle, str) else handle, flush=True)
sys.stdin.read()
