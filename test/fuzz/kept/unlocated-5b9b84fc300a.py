# RUN: %tl-opt %s | FileCheck %s
# RUN: %tl-opt %s > %t.py && %tl-opt %t.py | diff - %t.py
# RUN: not %tl-opt -D bad=True %s 2>&1 | FileCheck --check-prefix=ERR %s
# Issue 14: T.StridedTensor(shape, strides, dtype) declares a global tensor
# whose element strides are given (a constant or a T.dynamic symbol); it
# prints back as written; a strides tuple of another length is an error.
import tilelang
import tilelang.language as T


@tilelang.jit
def k(bad=False):
    ld = T.dynamic("ld")

    @T.prim_func
    def main(A: T.StridedTensor((64, 32), (ld, 9223372036854775807) if not bad else (ld,), "float16"),
             B: T.Tensor((64, 32), "float16")):
        with T.Kernel(1, threads=128):
            for i, j in T.Parallel(64, 32):
                B[i, j] = A[i, j]

    return main

# CHECK: def main(A: T.StridedTensor((64, 32), (ld, 1), "float16"), B: T.Tensor((64, 32), "float16")):
# ERR: strided_tensor.py:16:43: error: T.StridedTensor: 1 strides for a shape of 2 dimensions
