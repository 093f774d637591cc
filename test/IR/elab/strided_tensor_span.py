# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# RUN: %tl-opt -D big=False %s | FileCheck %s --check-prefix=OK
# Issue 15: a T.StridedTensor whose constant extents and strides reach more
# bytes than int64 counts is a located error (found by test/fuzz/mutate.py,
# 60-minute run, seed 1510: strided_tensor.py's stride 1 -> 2**63 - 1; tl-run
# then failed allocating the input with an error that had no location).  The
# dimensions of dynamic extent or stride count for at least nothing.
# CHECK: strided_tensor_span.py:[[@LINE+11]]:43: error: T.StridedTensor: the elements these strides reach span more bytes than int64 counts
# OK: def main(A: T.StridedTensor((64, 32), (ld, T.int64(4611686018427387)), "float16")
import tilelang
import tilelang.language as T


@tilelang.jit
def k(big=True):
    ld = T.dynamic("ld")

    @T.prim_func
    def main(A: T.StridedTensor((64, 32), (ld, 9223372036854775807 if big else 4611686018427387), "float16"),
             B: T.Tensor((64, 32), "float16")):
        with T.Kernel(1, threads=128):
            for i, j in T.Parallel(64, 32):
                B[i, j] = A[i, j]

    return main
