# RUN: not %tl-opt --emit=simt %s 2>&1 | FileCheck %s
# One accumulator, two T.gemm with policies that split it differently: a layout
# conflict naming the buffer and both ops.
import tilelang.language as T


@T.prim_func
def main(C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 32), "float16")
        B_s = T.alloc_shared((32, 64), "float16")
        C_f = T.alloc_fragment((64, 64), "float32")
        T.gemm(A_s, B_s, C_f, policy=T.GemmWarpPolicy.FullRow)
        T.gemm(A_s, B_s, C_f, policy=T.GemmWarpPolicy.FullCol)
        T.copy(C_f, C)

# CHECK: gemm_layout_conflict.py:14:9: error: layout conflict for fragment 'C_f': this T.gemm splits it over 1x4 warps, but the T.gemm that set its layout splits it over 4x1 warps
# CHECK: gemm_layout_conflict.py:13:9: note: the T.gemm that sets the layout of 'C_f' is here
