# RUN: %tl-opt --passes=barriers %s | FileCheck %s
# Pass "barriers" (lib/Lower/barrier.c) alone: a T.sync_threads() goes
# between a shared write and a later read of the same bytes (RAW), and
# between a read and a later overwrite (WAR, loop-carried too: the next
# iteration's copy into S after this one's read), but not between accesses
# of disjoint halves of a buffer, and not twice where one already orders
# them.
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((4, 64, 64), "float16"), B: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((64, 64), "float16")
        H = T.alloc_shared((64, 64), "float16")
        F = T.alloc_fragment((64, 64), "float16")
        T.copy(A[0, 0:32, 0:64], H[0:32, 0:64])
        T.copy(A[1, 0:32, 0:64], H[32:64, 0:64])
        T.copy(H, F)
        for k in T.serial(4):
            T.copy(A[k, 0:64, 0:64], S)
            T.copy(S, F)
        T.copy(F, B)

# CHECK: T.copy(A[0, 0:32, 0:64], H[0:32, 0:64])
# CHECK-NEXT: T.copy(A[1, 0:32, 0:64], H[32:32 + 32, 0:64])
# CHECK-NEXT: T.sync_threads()
# CHECK-NEXT: T.copy(H, F)
# CHECK-NEXT: for k in T.serial(4):
# CHECK-NEXT: T.sync_threads()
# CHECK-NEXT: T.copy(A[k, 0:64, 0:64], S)
# CHECK-NEXT: T.sync_threads()
# CHECK-NEXT: T.copy(S, F)
# CHECK-NEXT: T.copy(F, B)
