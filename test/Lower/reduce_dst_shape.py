# RUN: not %tl-opt --emit=simt %s 2>&1 | FileCheck %s
# Issue 7 point 5: a reduce whose destination is not the source with dim
# removed (or kept as 1) is a compile error naming the rule, the op and both
# buffers.
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64, 128), "float32"), B: T.Tensor((64, 2), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_f = T.alloc_fragment((64, 128), "float32")
        row_max = T.alloc_fragment((64, 2), "float32")
        T.copy(A, A_f)
        T.reduce_max(A_f, row_max, dim=1)
        T.copy(row_max, B)

# CHECK: reduce_dst_shape.py:14:9: error: T.reduce_max: dst shape (64, 2) is not src shape (64, 128) with dim 1 removed or kept as 1 (dst 'row_max', src 'A_f')
