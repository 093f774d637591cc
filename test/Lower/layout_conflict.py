# RUN: not %tl-opt --emit=simt %s 2>&1 | FileCheck %s
# A fragment distributed over threads by one op (a T.Parallel loop writing
# it) and indexed differently by another: a layout conflict naming the buffer
# and both ops. (Distributed by a T.copy alone, it is replicated instead:
# test/Interp/ops/replicated_copy.py.)
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        F = T.alloc_fragment((64, 64), "float32")
        for i, j in T.Parallel(64, 64):
            F[i, j] = A[i, j] + 1.0
        for i, j in T.Parallel(64, 64):
            B[i, j] = F[j, i]

# CHECK: layout_conflict.py:15:9: error: layout conflict for fragment 'F': this T.Parallel loop indexes it differently from the T.Parallel loop that distributes it over the threads
# CHECK: layout_conflict.py:13:9: note: the T.Parallel loop that sets the layout of 'F' is here
