# Input of test_ir.c clone tests: a layout annotation, an initialised T.alloc_var,
# a scalar parameter and both branches of an if, which the examples do not show.
import tilelang
import tilelang.language as T
from tilelang.layout import make_swizzled_layout


@T.prim_func
def main(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16"), n: T.int32):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((64, 64), "float16")
        x = T.alloc_var("int32", 3)
        T.annotate_layout({S: make_swizzled_layout(S)})
        T.copy(A, S)
        if n > x:
            T.copy(S, B)
        else:
            T.fill(B, 0)
