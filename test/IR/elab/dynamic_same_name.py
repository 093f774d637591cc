# RUN: %tl-opt %s | FileCheck %s
# RUN: not %tl-opt -D bad=1 %s 2>&1 | FileCheck %s --check-prefix=ERR
# T.dynamic("n") called twice gives one symbol (the package writes a captured symbol as a T.dynamic call
# at each place a captured shape list holds it: blocksparse_attention's decode examples); a second call with
# another dtype is a located error.
import tilelang.language as T

bad = 0
shape_a = [T.dynamic("n"), 4]
shape_b = [T.dynamic("n")]
shape_c = [T.dynamic("m", "int64" if bad else "int32")]


@T.prim_func
def main(A: T.Tensor(shape_a, "float32"), B: T.Tensor(shape_b, "float32"), C: T.Tensor(shape_c, "float32"),
         D: T.Tensor([T.dynamic("m")], "float32")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.serial(T.min(B.shape[0], C.shape[0])):
            B[i] = A[i, 0] + C[i] + D[i]

# CHECK:      n = T.dynamic("n")
# CHECK-NEXT: m = T.dynamic("m")
# CHECK-NOT:  T.dynamic
# CHECK:      def main(A: T.Tensor((n, 4), "float32"), B: T.Tensor((n,), "float32"), C: T.Tensor((m,), "float32"), D: T.Tensor((m,), "float32")):
# ERR: dynamic_same_name.py:16:23: error: dynamic symbol 'm' is int32 here but int64 where it was first declared
# ERR: dynamic_same_name.py:11:12: note: first declared here
