"""Element-wise C = A + B (2-D tiles through fragments), the factory decorated with @tilelang.jit.

    python3 examples/python/elementwise.py           # GPU with PyTorch: 4096x4096 f16 vs torch
    python3 examples/python/elementwise.py --small   # CPU SIMT executor with NumPy, 64x256 f32
Prints "elementwise: PASS ..." and exits 0, or raises."""
import sys

import tilelang_ptx as tilelang
import tilelang_ptx.language as T


@tilelang.jit(out_idx=-1)
def elementwise_add(M, N, block_M=32, block_N=128, dtype="float32", threads=128):

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_frag = T.alloc_fragment((block_M, block_N), dtype)
            B_frag = T.alloc_fragment((block_M, block_N), dtype)
            C_frag = T.alloc_fragment((block_M, block_N), dtype)
            T.copy(A[by * block_M, bx * block_N], A_frag)
            T.copy(B[by * block_M, bx * block_N], B_frag)
            for i, j in T.Parallel(block_M, block_N):
                C_frag[i, j] = A_frag[i, j] + B_frag[i, j]
            T.copy(C_frag, C[by * block_M, bx * block_N])

    return main


if __name__ == "__main__":
    gpu = "--small" not in sys.argv
    try:
        import torch
        gpu = gpu and torch.cuda.is_available()
    except ImportError:
        gpu = False
    if gpu:
        M, N, dtype = 4096, 4096, "float16"
        kernel = elementwise_add(M, N, dtype=dtype)
        A = torch.randn(M, N, dtype=torch.float16, device="cuda")
        B = torch.randn(M, N, dtype=torch.float16, device="cuda")
        C = kernel(A, B)
        tilelang.testing.torch_assert_close(C, A + B, atol=1e-2, rtol=1e-2, max_mismatched_ratio=0)
        where = "GPU (PyTorch), 4096x4096 float16"
    else:
        import numpy as np
        M, N = 64, 256
        kernel = elementwise_add(M, N)
        rng = np.random.default_rng(0)
        A = rng.standard_normal((M, N)).astype(np.float32)
        B = rng.standard_normal((M, N)).astype(np.float32)
        C = kernel(A, B)
        tilelang.testing.torch_assert_close(C, A + B, atol=1e-6, rtol=1e-6, max_mismatched_ratio=0)
        where = "CPU SIMT executor (NumPy), 64x256 float32"
    print(f"elementwise: PASS on the {where}")
