# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check --kernel=atomic_addx2_program %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=atomic_addx2_program -D dtype=float32 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=atomic_addx2_program -D dtype=bfloat16 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=atomic_addx2_mixed %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=atomic_addx4_program %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=atomic_addx4_rows %s | FileCheck %s
# RUN: %tl-opt --emit=simt --kernel=atomic_addx2_mixed %s | FileCheck %s --check-prefix=X2
# RUN: %tl-opt --emit=simt --kernel=atomic_addx4_program %s | FileCheck %s --check-prefix=X4
# T.atomic_addx2 / T.atomic_addx4 (after TileLang's testing/python/language
# atomic tests, 32x64 in 8x16 blocks of 32 threads): B[i, j:j+L] += A[i, j:j+L]
# with one atomic per element (the value converted to B's dtype first); a
# float16 pair whose offset is provably even becomes one red.add.noftz.f16x2.
# Every tensor is an input (B starts from tl-run's random values); every
# element is checked against the reference evaluator.
import tilelang
import tilelang.language as T


@tilelang.jit
def atomic_addx2_program(M=32, N=64, block_M=8, block_N=16, dtype="float16"):
    @T.prim_func
    def addx2(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), T.ceildiv(N, block_N), threads=32) as (bx, by):
            for i, j in T.Parallel(block_M, block_N // 2):
                idx_i = bx * block_M + i
                idx_j = by * block_N + j * 2
                T.atomic_addx2(B[idx_i, idx_j], A[idx_i, idx_j])

    return addx2


@tilelang.jit
def atomic_addx2_mixed(M=32, N=64, block_M=8, block_N=16, src_dtype="float32", dst_dtype="float16"):
    @T.prim_func
    def addx2_mixed(A: T.Tensor((M, N), src_dtype), B: T.Tensor((M, N), dst_dtype)):
        with T.Kernel(T.ceildiv(M, block_M), T.ceildiv(N, block_N), threads=32) as (bx, by):
            for i, j in T.Parallel(block_M, block_N // 2):
                T.atomic_addx2(B[bx * block_M + i, by * block_N + j * 2], A[bx * block_M + i, by * block_N + j * 2])

    return addx2_mixed


@tilelang.jit
def atomic_addx4_program(M=32, N=64, block_M=8, block_N=16):
    @T.prim_func
    def addx4(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), T.ceildiv(N, block_N), threads=32) as (bx, by):
            for i, j in T.Parallel(block_M, block_N // 4):
                idx_i = bx * block_M + i
                idx_j = by * block_N + j * 4
                T.atomic_addx4(B[idx_i, idx_j], A[idx_i, idx_j])

    return addx4


# The sliced form: every row of val added into the row of dst that idx names
# (rows collide: several atomics on one element), inside a T.Parallel.
@tilelang.jit
def atomic_addx4_rows(N=64, M=8):
    @T.prim_func
    def addx4_rows(idx: T.Tensor((N,), "int32"), val: T.Tensor((N, 4), "float32"), dst: T.Tensor((M, 4), "float32")):
        with T.Kernel(1, threads=N):
            for t in T.Parallel(N):
                T.atomic_addx4(dst[T.abs(idx[t]), 0:4], val[t, 0:4])

    return addx4_rows

# CHECK: check: PASS
# X2: T.ptx_atomic_add(B, {{.*}}, T.Cast("float16x2", A[{{.*}}T.Ramp(
# X4: for l in T.unroll(4):
# X4: T.ptx_atomic_add(B, {{.*}} + l), A[
