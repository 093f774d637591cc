# RUN: %tl-opt --passes=atomic %s | FileCheck %s
# RUN: %tl-opt --passes=atomic %s | %tl-opt --passes=atomic - | FileCheck %s
# Pass "atomic" (lib/Lower/lower_atomic.c) alone: the region form of
# T.atomic_add becomes a T.Parallel loop over the region of scalar
# T.ptx_atomic_add (the source converted to the destination's dtype); the
# scalar form inside a T.Parallel becomes one T.ptx_atomic_add per
# iteration; nothing else changes (still tile IR: the T.copy stays), and
# running it again changes nothing.
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((32, 16), "float16"), C: T.Tensor((32, 16), "float32")):
    with T.Kernel(2, threads=64) as bx:
        A_s = T.alloc_shared((16, 16), "float16")
        T.copy(A[bx * 16, 0], A_s)
        T.atomic_add(C[bx * 16:bx * 16 + 16, 0:16], A_s)
        for i, j in T.Parallel(4, 16):
            T.atomic_add(C[bx * 2147483647 + i, j], T.Cast("float32", A_s[i, j]) * 2.0)

# CHECK: T.copy(A[bx * 16:bx * 16 + 16, 0:16], A_s)
# CHECK-NOT: T.atomic_add
# CHECK: for [[I:[a-z0-9_]+]], [[J:[a-z0-9_]+]] in T.Parallel(16, 16):
# CHECK-NEXT: T.ptx_atomic_add(C, (bx * 16 + [[I]]) * 16 + [[J]], T.Cast("float32", A_s{{\[}}[[I]], [[J]]{{\]}}), False)
# CHECK: for i, j in T.Parallel(4, 16):
# CHECK-NEXT: T.ptx_atomic_add(C, (bx * 4 + i) * 16 + j, T.Cast("float32", A_s[i, j]) * 2.0, False)
# CHECK-NOT: T.atomic_add
