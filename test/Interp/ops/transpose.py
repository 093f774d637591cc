# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check --kernel=tilelang_transpose %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=tilelang_transpose -D M=256 -D N=128 -D block_M=64 -D block_N=128 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=transpose_square -D M=256 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=transpose_iota %s | FileCheck %s --check-prefix=IOTA
# RUN: %tl-opt --kernel=transpose_square %s | FileCheck %s --check-prefix=TIR
# T.transpose of shared tiles (TileLang's copy_op.py; the kernels and sizes
# of its testing/python/language transpose tests: 128x128 and 256x128 in one
# tile or 64x128 tiles, square 256 in 128x128 tiles, float16), B = A.T checked
# element by element against the reference evaluator.  transpose_iota
# transposes S[i, j] = 100 * j + i (4x8) and its right half into slices of a
# 3-D tile: R holds row 0 of each, S[0:4, 0] = 0..3 and S[0:4, 4] = 400..403,
# sum 1612 exactly.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def tilelang_transpose(M=128, N=128, block_M=128, block_N=128, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((N, M), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            tile = T.alloc_shared((block_M, block_N), dtype)
            tile_T = T.alloc_shared((block_N, block_M), dtype)
            T.copy(A[by * block_M:(by + 1) * block_M, bx * block_N:(bx + 1) * block_N], tile)
            T.transpose(tile, tile_T)
            T.copy(tile_T, B[bx * block_N:(bx + 1) * block_N, by * block_M:(by + 1) * block_M])

    return main


@tilelang.jit(out_idx=[1])
def transpose_square(M=128, block_M=128, dtype="float16"):
    @T.prim_func
    def square(A: T.Tensor((M, M), dtype), B: T.Tensor((M, M), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), T.ceildiv(M, block_M), threads=128) as (bx, by):
            tile = T.alloc_shared((block_M, block_M), dtype)
            tile_T = T.alloc_shared((block_M, block_M), dtype)
            T.copy(A[by * block_M:(by + 1) * block_M, bx * block_M:(bx + 1) * block_M], tile)
            T.transpose(tile, tile_T)
            T.copy(tile_T, B[bx * block_M:(bx + 1) * block_M, by * block_M:(by + 1) * block_M])

    return square


@tilelang.jit(out_idx=-1)
def transpose_iota():
    @T.prim_func
    def iota(B: T.Tensor((8, 4), "float32"), R: T.Tensor((1, 8), "float32")):
        with T.Kernel(1, threads=32) as bx:
            S = T.alloc_shared((4, 8), "float32")
            D = T.alloc_shared((2, 8, 4), "float32")
            for i, j in T.Parallel(4, 8):
                S[i, j] = T.Cast("float32", 100 * j + i)
            T.transpose(S, D[1, :, :])
            T.copy(D[1, 0:1, 0:4], R[0:1, 0:4])
            T.transpose(S[0:4, 4:8], D[0, 0:4, :])
            T.copy(D[0, 0:1, 0:4], R[0:1, 4:8])

    return iota

# CHECK: check: PASS
# IOTA: output R shape=[1,8] dtype=float32 sum=1612 abs_sum=1612
# IOTA-NEXT: check: PASS
# TIR: for tr_i0, tr_i1 in T.Parallel(128, 128):
# TIR-NEXT: tile_T[tr_i1, tr_i0] = tile[tr_i0, tr_i1]
