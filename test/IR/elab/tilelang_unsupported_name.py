# A name that TileLang exports but we do not support is "not supported yet",
# at the name, with the caret; a name TileLang does not have stays "unknown".
# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}tilelang_unsupported_name.py:15:11: error: T.cummax is not supported yet
# CHECK-NEXT: {{^}}        T.cummax(A, B)
# CHECK-NEXT: {{^}}          ^{{$}}
# CHECK: {{.*}}tilelang_unsupported_name.py:16:15: error: unknown name 'T.cummaxx'
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        T.cummax(A, B)
        y = T.cummaxx(A)
