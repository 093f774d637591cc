# RUN: %tl-opt --passes=check-supported,atomic,warp-specialize,pipeline,barriers,versioning,layout-inference %s | FileCheck %s
# Issue 14: a T.Parallel(4) over the first 4 elements of a fragment of 8 that
# a T.copy distributes runs over all 8 with the body under i < 4.
import tilelang.language as T


@T.prim_func
def main(S: T.Tensor((8,), "float32"), D: T.Tensor((4, 64), "float32")):
    with T.Kernel(1, threads=128):
        S_f = T.alloc_fragment((8,), "float32")
        D_s = T.alloc_shared((4, 64), "float32")
        T.copy(S, S_f)
        for k in T.serial(64):
            for i in T.Parallel(4):
                D_s[i, k] = S_f[i]
        T.copy(D_s, D)

# CHECK: for i in T.Parallel(8):
# CHECK-NEXT: if i < 4:
# CHECK-NEXT: D_s[i, k] = S_f[i]
