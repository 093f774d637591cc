# RUN: not %tl-opt --emit=simt %s 2>&1 | FileCheck %s
# The rs form needs each warp to hold whole rows of A: a T.gemm with A in a
# fragment whose policy splits N over warps (Square: 2x2) is an error that
# states the rule and the numbers.
import tilelang.language as T


@T.prim_func
def main(P: T.Tensor((64, 32), "float16"), V: T.Tensor((32, 64), "float16"), O: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        V_s = T.alloc_shared((32, 64), "float16")
        P_f = T.alloc_fragment((64, 32), "float16")
        acc_o = T.alloc_fragment((64, 64), "float32")
        T.copy(P, P_f)
        T.copy(V, V_s)
        T.gemm(P_f, V_s, acc_o, policy=T.GemmWarpPolicy.Square, clear_accum=True)
        T.copy(acc_o, O)

# CHECK: fa_rs_policy.py:16:9: error: T.gemm with A in fragment 'P_f' (the rs form) needs its warps to split only M, so that each warp holds whole rows of A in registers: the rule is warp_n == 1, but policy Square splits the 64x64 accumulator over 2x2 warps; use policy=T.GemmWarpPolicy.FullRow or stage A through T.alloc_shared
