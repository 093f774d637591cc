# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --target=sm_90a %s | FileCheck %s
# TileLang's gemm/example_gemm_persistent.py (use_persistent_primitive=True) at
# a small size: a pipelined GEMM per tile inside T.Persistent over the
# 3 x 2 tiles of C, 4 blocks (so blocks 0 and 1 take a second tile, in grouped
# order with groups of 8 clamped to the 2 tile columns), C staged through
# shared memory; checked against the reference evaluator on the mma.sync path
# and on sm_90a.
import tilelang
import tilelang.language as T

M = 192
N = 128
K = 96
SMS = 4


@tilelang.jit(out_idx=-1)
def matmul_persistent(block_M=64, block_N=64, block_K=32, threads=128, num_stages=2, dtype="float16",
                      accum_dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(SMS, threads=threads) as block_id:
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            C_shared = T.alloc_shared((block_M, block_N), dtype)
            for bx, by in T.Persistent([T.ceildiv(M, block_M), T.ceildiv(N, block_N)], SMS, block_id):
                T.clear(C_local)
                for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                    T.copy(A[bx * block_M, k * block_K], A_shared)
                    T.copy(B[k * block_K, by * block_N], B_shared)
                    T.gemm(A_shared, B_shared, C_local)
                T.copy(C_local, C_shared)
                T.copy(C_shared, C[bx * block_M, by * block_N])

    return main

# CHECK: output C shape=[192,128] dtype=float16
# CHECK-NEXT: check: PASS
