# An eager element-wise kernel: T.const symbols bound by -D (or by the file's
# add.compile(...) call), a dtype parameter with a default, a tuple output.
# RUN: %tl-opt %s | FileCheck %s
# RUN: %tl-run --device=cpu --check %s | FileCheck %s --check-prefix=EXEC
# RUN: %tl-run --device=cpu --check -D M=48 -D N=40 -D dtype=float16 %s | FileCheck %s --check-prefix=EXEC
# CHECK: def add(A: T.Tensor((64, 96), "float32"), B: T.Tensor((64, 96), "float32"), C: T.Tensor((64, 96), "float32"), D: T.Tensor((64, 96), "float32")):
# CHECK-NEXT: T.func_attr({"out_idx": [2, 3]})
# EXEC: check: PASS
import tilelang
import tilelang.language as T


@tilelang.jit
def add(A, B, block_M=16, block_N=32, dtype="float32"):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), dtype)
    B: T.Tensor((M, N), dtype)
    C = T.empty((M, N), dtype)
    D = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        for i, j in T.Parallel(block_M, block_N):
            y = by * block_M + i
            x = bx * block_N + j
            if y < M and x < N:
                C[y, x] = A[y, x] + B[y, x]
                D[y, x] = A[y, x] - B[y, x]
    return C, D


kernel = add.compile(M=64, N=96)
