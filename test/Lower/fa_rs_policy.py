# RUN: %tl-opt --emit=simt --remarks %s 2>&1 | FileCheck %s
# RUN: %tl-run --device=cpu --check %s | FileCheck %s --check-prefix=EXEC
# REQUIRES: tl-run
# A T.gemm with A in a fragment whose policy splits N over warps (Square:
# 2x2) cannot read A from registers (each warp would need whole rows of A):
# the gemm-stage pass (issue 14) copies P_f to a shared tile first, with a
# remark saying why, and the result checks against the reference evaluator.
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

# CHECK: fa_rs_policy.py:19:9: remark: T.gemm reads A 'P_f' through shared memory ('P_f_stage'): A is a fragment and policy Square splits the 64x64 accumulator over 2x2 warps (registers hold A only when warp_n == 1, policy FullRow)
# CHECK: P_f_stage = T.alloc_shared((2048,), "float16")
# CHECK: T.sync_threads()
# CHECK: T.ptx_ldmatrix(A_regs, {{.*}}, P_f_stage,
# CHECK: T.ptx_mma(
# EXEC: output O shape=[64,64] dtype=float32
# EXEC-NEXT: check: PASS
