# REQUIRES: tl-run
# RUN: not %tl-run --device=cpu --check -D M=128 -D N=128 -D K=128 -D split_k=2 %s 2>&1 | FileCheck %s
# Issue 15 class 6: examples/gemm_splitk.py with T.copy instead of T.atomic_add.
# The split_k blocks along z write the same C tile without an atomic; the SIMT
# executor reports the write-write race on global memory, naming both writers
# (thread, block, source line).  Block (0, 0, 1) runs after (0, 0, 0) and its
# thread 0 stores C[0, 0] first as thread 0 of block (0, 0, 0) did (line 30).

# CHECK: race_global_splitk.py:30:{{[0-9]+}}: error: data race on global memory: thread 0 writes 'C'[0, 0] (line 30), which thread 0 of block (0, 0, 0) (line 30) also wrote in another block; blocks are unordered: use T.atomic_add or give each element one writing block (block (0, 0, 1))
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=None)
def matmul_splitk(M=1024, N=1024, K=1024, block_M=128, block_N=128, block_K=32, split_k=4,
                  dtype="float16", accum_dtype="float32", out_dtype="float32", num_stages=2, threads=128):
    splitK = K // split_k

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), split_k, threads=threads) as (bx, by, bz):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(splitK, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, bz * splitK + ko * block_K], A_shared)
                T.copy(B[bz * splitK + ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M:(by + 1) * block_M, bx * block_N:(bx + 1) * block_N])

    return main
