# RUN: not %tl-opt --emit=simt %s 2>&1 | FileCheck %s
# Issue 7 point 5: a FlashAttention variant whose row statistics (from the
# FullRow accumulator acc_s: 4 warps over rows) are used with an accumulator
# that a Square gemm splits over 2x2 warps: the statistic's rows live on
# other threads, a layout conflict naming the buffer and both ops.
import tilelang.language as T


@T.prim_func
def main(Q: T.Tensor((128, 64), "float16"), K: T.Tensor((64, 64), "float16"),
         V: T.Tensor((64, 64), "float16"), O: T.Tensor((128, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        Q_s = T.alloc_shared((128, 64), "float16")
        K_s = T.alloc_shared((64, 64), "float16")
        V_s = T.alloc_shared((64, 64), "float16")
        P_s = T.alloc_shared((128, 64), "float16")
        acc_s = T.alloc_fragment((128, 64), "float32")
        acc_o = T.alloc_fragment((128, 64), "float32")
        m = T.alloc_fragment((128,), "float32")
        T.copy(Q, Q_s)
        T.copy(K, K_s)
        T.copy(V, V_s)
        T.clear(acc_s)
        T.clear(acc_o)
        T.gemm(Q_s, K_s, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
        T.reduce_max(acc_s, m, dim=1)
        T.copy(acc_s, P_s)
        T.gemm(P_s, V_s, acc_o, policy=T.GemmWarpPolicy.Square)
        for i, j in T.Parallel(128, 64):
            acc_o[i, j] = acc_o[i, j] * m[i]
        T.copy(acc_o, O)

# CHECK: reduce_fa_conflict.py:29:9: error: layout conflict for fragment 'm': this T.Parallel loop reads the row statistic 'm'[i] on the threads that hold row i of 'acc_o' (whose layout the T.gemm sets), but the T.reduce_max that sets the layout of 'm' gives row i to other threads
# CHECK: reduce_fa_conflict.py:26:9: note: the T.reduce_max that sets the layout of 'm' is here
# CHECK: reduce_fa_conflict.py:28:9: note: the T.gemm that sets the layout of 'acc_o' is here
