# A name that TileLang exports but we do not support is "not supported yet",
# at the name, with the caret (also as an allocation, T.alloc_cluster_barrier); a
# name TileLang does not have stays "unknown".
# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}tilelang_unsupported_name.py:19:11: error: T.reduce_bitand is not supported yet
# CHECK-NEXT: {{^}}        T.reduce_bitand(A, B)
# CHECK-NEXT: {{^}}          ^{{$}}
# CHECK: {{.*}}tilelang_unsupported_name.py:20:15: error: T.alloc_cluster_barrier is not supported yet
# CHECK: {{.*}}tilelang_unsupported_name.py:21:15: error: unknown name 'T.cummaxx'
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((128,), "float32")
        T.cummax(S)
        T.reduce_bitand(A, B)
        C = T.alloc_cluster_barrier(128)
        y = T.cummaxx(A)
