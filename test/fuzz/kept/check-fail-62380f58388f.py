# RUN: %tl-opt --passes=versioning %s | FileCheck %s
# Pass "versioning" (lib/Lower/versioning.c) alone, on tile IR: the
# T.Parallel storing T.if_then_else(c, 1.0, 0.0) with c affine in i, j gets
# a version storing 1.0, taken when c holds at the corner where it is
# tightest (i = 0, j = 63 for >=); the original loop stays in the else
# branch.  A condition that is not affine (i * j) is left alone.
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((256, 64), "float32")):
    with T.Kernel(8, threads=128) as bx:
        S = T.alloc_fragment((63, 64), "float32")
        for k in T.serial(4):
            for i, j in T.Parallel(32, 64):
                S[i, j] = T.if_then_else(bx * 32 + i >= k * 64 + j, 1.0, 0.0)
            for i, j in T.Parallel(32, 64):
                S[i, j] = T.if_then_else(i * j < 5, 3.0, S[i, j])
        T.copy(S, A[bx * 32000, 0])

# CHECK: for k in T.serial(4):
# CHECK-NEXT: if bx * 32 >= k * 64 + 63:
# CHECK-NEXT: for i, j in T.Parallel(32, 64):
# CHECK-NEXT: S[i, j] = 1.0
# CHECK-NEXT: else:
# CHECK-NEXT: for i, j in T.Parallel(32, 64):
# CHECK-NEXT: S[i, j] = T.if_then_else(bx * 32 + i >= k * 64 + j, 1.0, 0.0)
# CHECK-NEXT: for i, j in T.Parallel(32, 64):
# CHECK-NEXT: S[i, j] = T.if_then_else(i * j < 5, 3.0, S[i, j])
