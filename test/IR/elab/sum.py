# sum(iterable[, start]) at compile time: a list, a generator expression (TileLang's grouped GEMM sums the
# blocks of each group: sum((size + block_M - 1) // block_M for size in sizes)), floats, a start value;
# sum of something that is not iterable is a located error.
# RUN: %tl-opt %s | FileCheck %s
# RUN: not %tl-opt -D bad=1 %s 2>&1 | FileCheck %s --check-prefix=BAD
# CHECK: def k(A: T.Tensor((17,), "float32"), B: T.Tensor((20,), "float32")):
# CHECK: with T.Kernel(6, threads=32) as bx:
# CHECK: B[bx * 4 + i] = A[bx * 4 + i] + 3.5
# BAD: sum.py:[[@LINE+10]]:71: error: cannot iterate over int 7 at compile time
import tilelang.language as T

bad = 0
sizes = [3, 5, 9]
block = 4


@T.prim_func
def k(A: T.Tensor((sum(sizes),), "float32"), B: T.Tensor((sum(sizes, 3),), "float32")):
    with T.Kernel(sum((s + block - 1) // block for s in sizes) + (sum(7) if bad else 0), threads=32) as bx:
        for i in T.Parallel(4):
            B[bx * 4 + i] = A[bx * 4 + i] + sum([1.5, 2])
