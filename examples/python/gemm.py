"""TileLang's original JIT GEMM test (the pull request that introduced tilelang.jit), with only the
import lines changed: the decorator on the @T.prim_func inside the factory, out_idx=-1 (C is
allocated and returned), checked with tilelang.testing.torch_assert_close.

    python3 examples/python/gemm.py           # on a GPU with PyTorch: 512x1024x768 f16 vs torch.matmul
    python3 examples/python/gemm.py --small   # CPU SIMT executor with NumPy, 64x64x64 (also without a GPU)
Prints "gemm: PASS ..." and exits 0, or raises."""
import sys

import tilelang_ptx as tilelang
import tilelang_ptx.language as T


def matmul(M, N, K, block_M, block_N, block_K, trans_A, trans_B, in_dtype, out_dtype, accum_dtype,
           num_stages, threads):
    A_shape = (K, M) if trans_A else (M, K)
    B_shape = (N, K) if trans_B else (K, N)
    A_shared_shape = (block_K, block_M) if trans_A else (block_M, block_K)
    B_shared_shape = (block_N, block_K) if trans_B else (block_K, block_N)

    @tilelang.jit(out_idx=-1, execution_backend="dl_pack")  # the output is allocated and returned
    @T.prim_func
    def main(A: T.Buffer(A_shape, in_dtype), B: T.Buffer(B_shape, in_dtype), C: T.Buffer((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared(A_shared_shape, in_dtype)
            B_shared = T.alloc_shared(B_shared_shape, in_dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                if trans_A:
                    T.copy(A[k * block_K, by * block_M], A_shared)
                else:
                    T.copy(A[by * block_M, k * block_K], A_shared)
                if trans_B:
                    T.copy(B[bx * block_N, k * block_K], B_shared)
                else:
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local, trans_A, trans_B)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


def run_gemm(M, N, K, block_M, block_N, block_K, trans_A, trans_B, in_dtype, out_dtype, accum_dtype,
             num_stages, threads, gpu):
    matmul_kernel = matmul(M, N, K, block_M, block_N, block_K, trans_A, trans_B, in_dtype, out_dtype,
                           accum_dtype, num_stages, threads)
    A_shape = (K, M) if trans_A else (M, K)
    B_shape = (N, K) if trans_B else (K, N)
    if gpu:
        import torch
        A = torch.randn(A_shape, dtype=getattr(torch, in_dtype), device="cuda")
        B = torch.randn(B_shape, dtype=getattr(torch, in_dtype), device="cuda")
        C = matmul_kernel(A, B)
        ref_C = torch.matmul((A.T if trans_A else A).float(), (B.T if trans_B else B).float()).to(C.dtype)
    else:
        import numpy as np
        rng = np.random.default_rng(0)
        A = rng.standard_normal(A_shape).astype(in_dtype)
        B = rng.standard_normal(B_shape).astype(in_dtype)
        C = matmul_kernel(A, B)
        ref_C = ((A.T if trans_A else A).astype("float32") @ (B.T if trans_B else B).astype("float32"))
        ref_C = ref_C.astype(out_dtype)
    tilelang.testing.torch_assert_close(C, ref_C, atol=1e-2, rtol=1e-2, max_mismatched_ratio=0.05)
    return matmul_kernel


if __name__ == "__main__":
    gpu = "--small" not in sys.argv and tilelang.testing.torch_cuda_available()
    if gpu:
        k = run_gemm(512, 1024, 768, 128, 256, 32, False, False, "float16", "float16", "float32", 3, 128, gpu)
        where = "GPU (PyTorch, vs torch.matmul), 512x1024x768"
    else:
        k = run_gemm(64, 64, 64, 32, 32, 32, False, False, "float16", "float16", "float32", 2, 128, gpu)
        run_gemm(64, 64, 64, 32, 32, 32, False, True, "float16", "float16", "float32", 2, 128, gpu)
        where = "CPU SIMT executor (NumPy), 64x64x64, NN and NT"
    print(f"gemm: PASS on the {where}; kernel {k.kernel_name}, target {k.target}")
