# RUN: not %tl-opt --emit=simt %s 2>&1 | FileCheck %s
# S = Q·Kᵀ split over 2x2 warps (Square), cast, then used as the A operand of
# an rs-form T.gemm (FullRow, 4x1): the cast copy gives acc_s_cast the layout
# of acc_s, where a warp holds only half of each row, so mma.sync cannot read
# A from registers.  A layout conflict naming the buffer and both gemms.
import tilelang.language as T


@T.prim_func
def main(Q: T.Tensor((64, 64), "float16"), K: T.Tensor((64, 64), "float16"), V: T.Tensor((64, 64), "float16"),
         O: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        Q_s = T.alloc_shared((64, 64), "float16")
        K_s = T.alloc_shared((64, 64), "float16")
        V_s = T.alloc_shared((64, 64), "float16")
        acc_s = T.alloc_fragment((64, 64), "float32")
        acc_s_cast = T.alloc_fragment((64, 64), "float16")
        acc_o = T.alloc_fragment((64, 64), "float32")
        T.copy(Q, Q_s)
        T.copy(K, K_s)
        T.copy(V, V_s)
        T.gemm(Q_s, K_s, acc_s, transpose_B=True, clear_accum=True)
        T.copy(acc_s, acc_s_cast)
        T.gemm(acc_s_cast, V_s, acc_o, policy=T.GemmWarpPolicy.FullRow, clear_accum=True)
        T.copy(acc_o, O)

# CHECK: fa_rs_conflict.py:24:9: error: layout conflict for fragment 'acc_s_cast': this T.gemm reads it as its A operand (the rs form), which needs the mma accumulator layout of a T.gemm whose warps split only M (4x1 warps, policy FullRow) with the same warp rows, but it takes its layout from 'acc_s', which the T.gemm here splits over 2x2 warps; use policy=T.GemmWarpPolicy.FullRow on both gemms or stage A through T.alloc_shared
# CHECK: fa_rs_conflict.py:22:9: note: the T.gemm that sets the layout of 'acc_s' is here
