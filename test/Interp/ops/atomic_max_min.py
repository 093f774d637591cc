# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check --kernel=atomic_different_orders %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=atomic_different_orders -D dtype=float16 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=atomic_different_orders -D dtype=bfloat16 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=atomic_different_orders -D dtype=int32 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=atomic_tiles %s | FileCheck %s --check-prefix=TILES
# RUN: %tl-opt --emit=simt --kernel=atomic_different_orders %s | FileCheck %s --check-prefix=SIMT
# T.atomic_add / T.atomic_max / T.atomic_min element-wise in a T.Parallel
# loop (after TileLang's testing/python/language atomic tests, "different
# memory orders", 32x32 in 8x8 blocks of 32 threads); every tensor is an
# input (out_idx none: B, C, D start from tl-run's random values), and every
# element of B, C, D is checked against the reference evaluator.  The value
# form (return_prev=True) of T.atomic_max gives E the old contents of C,
# which a second max with the same values leaves unchanged: E equals C (their
# printed sums agree).
import tilelang
import tilelang.language as T


@tilelang.jit
def atomic_different_orders(M=32, N=32, block_M=8, block_N=8, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype),
             D: T.Tensor((M, N), dtype), E: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), T.ceildiv(N, block_N), threads=32) as (bx, by):
            for i, j in T.Parallel(block_M, block_N):
                idx_i = bx * block_M + i
                idx_j = by * block_N + j
                if idx_i < M and idx_j < N:
                    val = A[idx_i, idx_j]
                    T.atomic_add(B[idx_i, idx_j], val, memory_order="relaxed")
                    T.atomic_max(C[idx_i, idx_j], val, memory_order="relaxed")
                    T.atomic_min(D[idx_i, idx_j], val)
            for i, j in T.Parallel(block_M, block_N):
                E[bx * block_M + i, by * block_N + j] = T.atomic_max(C[bx * block_M + i, by * block_N + j],
                                                                     A[bx * block_M + i, by * block_N + j],
                                                                     return_prev=True)

    return main

# The tile-region forms: a fragment tile max-ed / min-ed into a partial
# global tile (rows past 40 skipped), as T.atomic_add's region form.
@tilelang.jit
def atomic_tiles(M=40, N=32, block_M=16, dtype="float32"):
    @T.prim_func
    def tiles(A: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype), D: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=64) as bx:
            F = T.alloc_fragment((block_M, N), dtype)
            T.copy(A[bx * block_M, 0], F)
            T.atomic_max(C[bx * block_M:(bx + 1) * block_M, 0:N], F)
            T.atomic_min(D[bx * block_M:(bx + 1) * block_M, 0:N], F)

    return tiles

# TILES: check: PASS
# CHECK: output C {{.*}} sum=[[SUM:[^ ]+]] abs_sum=[[ABS:[^ ]+]]
# CHECK: output E {{.*}} sum=[[SUM]] abs_sum=[[ABS]]
# CHECK: check: PASS
# SIMT: T.ptx_atomic_add(B,
# SIMT: T.ptx_atomic_max(C,
# SIMT: T.ptx_atomic_min(D,
# SIMT: = T.ptx_atomic_max(C, {{.*}}, True)
