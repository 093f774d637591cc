# RUN: %tl-opt --emit=simt %s | FileCheck %s
# The barrier pass (lib/Lower/barrier.c) puts no T.sync_threads() inside an
# `if` on a variable bound to the thread index (hand-written SIMT IR:
# `tx = T.get_thread_binding(0)`, and `lane = tx % 32` bound to that): only
# thread 0 / lane 0 runs it, so a bar.sync 0 there would wait forever on the
# GPU.  A variable bound to a block-uniform value (bx + 1) still has its `if`
# walked branch by branch, with a barrier between the write and the read.
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        s = T.alloc_shared((64,), "float32")
        tx = T.get_thread_binding(0)
        lane = tx % 32
        k = bx + 1
        # CHECK: if tx == 0:
        # CHECK-NEXT: s[0] = A[0]
        # CHECK-NEXT: s[1] = s[0]
        if tx == 0:
            s[0] = A[0]
            s[1] = s[0]
        T.sync_threads()
        # CHECK: if lane == 0:
        # CHECK-NEXT: s[2] = A[2]
        # CHECK-NEXT: B[tx] = s[2]
        if lane == 0:
            s[2] = A[2]
            B[tx] = s[2]
        # CHECK: if k == 1:
        # CHECK-NEXT: s[3] = A[3]
        # CHECK-NEXT: T.sync_threads()
        # CHECK-NEXT: B[3] = s[3]
        if k == 1:
            s[3] = A[3]
            B[3] = s[3]
