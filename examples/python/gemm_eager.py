"""The GEMM of gemm.py in TileLang's eager JIT style (TileLang PR #2010), imports changed: the
@tilelang.jit function is the kernel; its tensor parameters are declared in the body, M, N, K are
T.const symbols bound from the shapes of the tensors of each call (one compilation per distinct
binding), and the T.empty output C is allocated and returned.  `matmul.compile(M=..., ...)` gives
the same kernel without tensors.

    python3 examples/python/gemm_eager.py           # on a GPU with PyTorch: 512x1024x768 f16 vs torch.matmul
    python3 examples/python/gemm_eager.py --small   # CPU SIMT executor with NumPy, 64x64x64 and 32x64x96
Prints "gemm_eager: PASS ..." and exits 0, or raises."""
import sys

import tilelang_ptx as tilelang
import tilelang_ptx.language as T


@tilelang.jit
def matmul(A, B, block_M, block_N, block_K, dtype=T.float16, accum_dtype=T.float32, num_stages=3, threads=128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), dtype)
    B: T.Tensor((K, N), dtype)
    C = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), dtype)
        B_shared = T.alloc_shared((block_K, block_N), dtype)
        C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[by * block_M, k * block_K], A_shared)
            T.copy(B[k * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local)
        T.copy(C_local, C[by * block_M, bx * block_N])
    return C


def run_gemm(M, N, K, block_M, block_N, block_K, gpu):
    if gpu:
        import torch
        A = torch.randn(M, K, dtype=torch.float16, device="cuda")
        B = torch.randn(K, N, dtype=torch.float16, device="cuda")
        ref = lambda: torch.matmul(A.float(), B.float()).half()  # noqa: E731
    else:
        import numpy as np
        rng = np.random.default_rng(0)
        A = rng.standard_normal((M, K)).astype(np.float16)
        B = rng.standard_normal((K, N)).astype(np.float16)
        ref = lambda: (A.astype(np.float32) @ B.astype(np.float32)).astype(np.float16)  # noqa: E731
    C = matmul(A, B, block_M, block_N, block_K)  # M, N, K from A's and B's shapes
    tilelang.testing.torch_assert_close(C, ref(), atol=1e-2, rtol=1e-2, max_mismatched_ratio=0.05)
    n = tilelang.compile_count()
    kernel = matmul.compile(M=M, N=N, K=K, block_M=block_M, block_N=block_N, block_K=block_K)
    assert tilelang.compile_count() == n, "compile() with the call's binding compiled again"
    tilelang.testing.torch_assert_close(kernel(A, B), ref(), atol=1e-2, rtol=1e-2, max_mismatched_ratio=0.05)
    return kernel


if __name__ == "__main__":
    gpu = "--small" not in sys.argv and tilelang.testing.torch_cuda_available()
    if gpu:
        k = run_gemm(512, 1024, 768, 128, 256, 32, gpu)
        where = "GPU (PyTorch, vs torch.matmul), 512x1024x768"
    else:
        k = run_gemm(64, 64, 64, 32, 32, 32, gpu)
        run_gemm(32, 64, 96, 32, 32, 32, gpu)
        where = "CPU SIMT executor (NumPy), 64x64x64 and 32x64x96"
    print(f"gemm_eager: PASS on the {where}; {tilelang.compile_count()} compilation(s); kernel "
          f"{k.kernel_name}, target {k.target}")
