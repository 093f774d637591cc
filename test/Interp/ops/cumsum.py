# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check --kernel=cumsum_tile %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=cumsum_tile -D dim=1 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=cumsum_tile -D dim=1 -D reverse=True %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=cumsum_tile -D M=192 -D N=160 -D block_N=32 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=cumsum_tile -D M=192 -D N=160 -D block_N=32 -D reverse=True %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=cumsum_tile -D scope=fragment %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=cumsum_tile -D scope=fragment -D dim=-1 -D reverse=True %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=cumsum_1d %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=cumsum_1d -D reverse=True -D scope=fragment %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=cumsum_ones %s | FileCheck %s --check-prefix=ONES
# RUN: %tl-run --device=cpu --check --kernel=cumsum_tile -D op=cummax %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=cumsum_tile -D op=cummax -D dim=1 -D reverse=True %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=cumsum_tile -D op=cummax -D M=192 -D N=160 -D block_N=32 -D reverse=True %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=cumsum_tile -D op=cummax -D scope=fragment -D dim=1 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=cumsum_tile -D op=cummax -D M=128 -D N=128 -D scope=shared_out -D dim=1 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=cumsum_1d -D op=cummax -D reverse=True %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=cummax_pattern %s | FileCheck %s --check-prefix=PATTERN
# RUN: %tl-opt --kernel=cumsum_tile -D dim=1 -D reverse=True %s | FileCheck %s --check-prefix=TIR
# T.cumsum (TileLang's scan_op.py; the kernels and sizes of its
# testing/python/language scan tests: 256x256 in 64x64 tiles along dim 0 and
# 1, forward and reverse, 192x160 in 64x32 tiles, shared and fragment
# tiles, 1-D 512 in blocks of 64) checked element by element against the
# reference evaluator; cumsum_ones scans ones, so row r of each tile holds
# r + 1 (forward) and the sum of the output is known exactly.  T.cummax
# (op=cummax) runs the same kernels, and TileLang's out-of-place form
# (scope=shared_out); cummax_pattern scans i % 5 down the rows.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def cumsum_tile(M=256, N=256, block_M=64, block_N=64, dim=0, reverse=False, scope="shared", op="cumsum",
                dtype="float32"):
    @T.prim_func
    def cumsum(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_N), dtype)
            T.copy(A[by * block_M, bx * block_N], A_shared)
            if scope == "fragment":
                A_fragment = T.alloc_fragment((block_M, block_N), dtype)
                T.copy(A_shared, A_fragment)
                if op == "cummax":
                    T.cummax(src=A_fragment, dim=dim, reverse=reverse)
                else:
                    T.cumsum(src=A_fragment, dim=dim, reverse=reverse)
                T.copy(A_fragment, B[by * block_M, bx * block_N])
            elif scope == "shared_out":
                B_shared = T.alloc_shared((block_M, block_N), dtype)
                if op == "cummax":
                    T.cummax(src=A_shared, dst=B_shared, dim=dim, reverse=reverse)
                else:
                    T.cumsum(src=A_shared, dst=B_shared, dim=dim, reverse=reverse)
                T.copy(B_shared, B[by * block_M, bx * block_N])
            else:
                if op == "cummax":
                    T.cummax(src=A_shared, dim=dim, reverse=reverse)
                else:
                    T.cumsum(src=A_shared, dim=dim, reverse=reverse)
                T.copy(A_shared, B[by * block_M, bx * block_N])

    return cumsum


@tilelang.jit(out_idx=-1)
def cumsum_1d(N=512, block_N=64, reverse=False, scope="shared", op="cumsum", dtype="float32"):
    @T.prim_func
    def cumsum1(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), threads=block_N) as bx:
            A_shared = T.alloc_shared((block_N,), dtype)
            T.copy(A[bx * block_N], A_shared)
            if scope == "fragment":
                A_fragment = T.alloc_fragment((block_N,), dtype)
                T.copy(A_shared, A_fragment)
                if op == "cummax":
                    T.cummax(A_fragment, B[bx * block_N:(bx + 1) * block_N], 0, reverse)
                else:
                    T.cumsum(A_fragment, B[bx * block_N:(bx + 1) * block_N], 0, reverse)
            else:
                if op == "cummax":
                    T.cummax(A_shared, dim=0, reverse=reverse)
                else:
                    T.cumsum(A_shared, dim=0, reverse=reverse)
                T.copy(A_shared, B[bx * block_N])

    return cumsum1


# Ones in 32x16 tiles of a 64x32 output, scanned along dim 0 into another
# shared tile: each tile sums 16 * (1 + 2 + ... + 32) = 8448, four tiles 33792.
@tilelang.jit(out_idx=-1)
def cumsum_ones(M=64, N=32, block_M=32, block_N=16):
    @T.prim_func
    def ones(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            S = T.alloc_shared((block_M, block_N), "float32")
            D = T.alloc_shared((block_M, block_N), "float32")
            T.fill(S, 1.0)
            T.cumsum(S, D)
            T.copy(D, B[by * block_M, bx * block_N])

    return ones

# Rows i % 5 scanned by max down the rows of 32x16 tiles: each column holds
# 0, 1, 2, 3, then 4 for the 28 other rows (118), so 64x32 sums to 7552.
@tilelang.jit(out_idx=-1)
def cummax_pattern(M=64, N=32, block_M=32, block_N=16):
    @T.prim_func
    def pattern(B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            S = T.alloc_shared((block_M, block_N), "float32")
            for i, j in T.Parallel(block_M, block_N):
                S[i, j] = T.Cast("float32", i % 5)
            T.cummax(S, annotations={"test.scan": "cummax"})
            T.copy(S, B[by * block_M, bx * block_N])

    return pattern

# CHECK: check: PASS
# PATTERN: output B shape=[64,32] dtype=float32 sum=7552 abs_sum=7552
# PATTERN-NEXT: check: PASS
# ONES: output B shape=[64,32] dtype=float32 sum=33792 abs_sum=33792
# ONES-NEXT: check: PASS
# TIR: for cs_i in T.Parallel(64):
# TIR-NEXT: for cs_k in T.serial(63):
# TIR-NEXT: A_shared[cs_i, 62 - cs_k] = A_shared[cs_i, 62 - cs_k] + A_shared[cs_i, 63 - cs_k]
