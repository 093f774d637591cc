# The eager JIT style: T.const symbols, tensor parameters annotated in the
# body, an output made with T.empty and returned (it sets out_idx), and a
# module-level NAME.compile(...) read (not run) as the binding.
# RUN: %tl-opt %s | FileCheck %s
# RUN: %tl-run --device=cpu --check %s | FileCheck %s --check-prefix=EXEC
# RUN: %tl-opt -D M=64 -D block_M=32 %s | FileCheck %s --check-prefix=DEFS
# CHECK: def matmul(A: T.Tensor((128, 64), "float16"), B: T.Tensor((64, 96), "float16"), C: T.Tensor((128, 96), "float16")):
# CHECK-NEXT: T.func_attr({"out_idx": [2]})
# CHECK-NEXT: with T.Kernel(3, 2, threads=128) as (bx, by):
# EXEC: check: PASS
# DEFS: def matmul(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 96), "float16"), C: T.Tensor((64, 96), "float16")):
import torch
import tilelang
import tilelang.language as T


@tilelang.jit
def matmul(A, B, block_M: int, block_N: int, block_K: int, dtype=T.float16, accum_dtype=T.float32):
    M, N, K = T.const("M, N, K")
    assert K % block_K == 0, f"K={K} is not a multiple of block_K={block_K}"
    A: T.Tensor((M, K), dtype)
    B: T.Tensor((K, N), dtype)
    C = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), dtype)
        B_shared = T.alloc_shared((block_K, block_N), dtype)
        C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
        T.clear(C_local)
        for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
            T.copy(A[by * block_M, ko * block_K], A_shared)
            T.copy(B[ko * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local)
        T.copy(C_local, C[by * block_M, bx * block_N])
    return C


M, N, K = 128, 96, 64
kernel = matmul.compile(M=M, N=N, K=K, block_M=64, block_N=32, block_K=32)

if __name__ == "__main__":
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    torch.testing.assert_close(kernel(a, b), a @ b, rtol=1e-2, atol=1e-2)
