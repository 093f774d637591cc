# RUN: %tl-opt %s | FileCheck %s
# RUN: %tl-opt %s > %t.py && %tl-opt %t.py | diff - %t.py
# Two factories each declare their own dynamic symbol of one name (found by the
# libFuzzer round trip: the printer declared `ld` once per function, and the
# text read back shared one): the module declares each name once.
import tilelang
import tilelang.language as T


@tilelang.jit
def k1():
    ld = T.dynamic("ld")

    @T.prim_func
    def copy1(A: T.StridedTensor((64, 32), (ld, 1), "float16"), B: T.Tensor((64, 32), "float16")):
        with T.Kernel(1, threads=128):
            for i, j in T.Parallel(64, 32):
                B[i, j] = A[i, j]

    return copy1


@tilelang.jit
def k2():
    ld = T.dynamic("ld")

    @T.prim_func
    def copy2(A: T.StridedTensor((64, 32), (ld, 1), "float16"), B: T.Tensor((64, 32), "float16")):
        with T.Kernel(1, threads=128):
            for i, j in T.Parallel(64, 32):
                B[i, j] = A[i, j]

    return copy2

# CHECK: ld = T.dynamic("ld")
# CHECK-NOT: T.dynamic
# CHECK: def copy1(
# CHECK: def copy2(
