# RUN: %tl-opt --emit=simt --remarks %s 2>&1 | FileCheck %s
# RUN: %tl-run --device=cpu --check %s | FileCheck %s --check-prefix=EXEC
# REQUIRES: tl-run
# T.gemm with B in a fragment (the "sr" form, issue 14): the gemm-stage pass
# copies B_f to a shared tile, the gemm reads that (ldmatrix + mma.sync), and
# the result checks against the reference evaluator.  (A in a fragment, the
# rs form with warps splitting only M, reads registers: fa_rs_gemm.py.)
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 64), "float16")
        B_f = T.alloc_fragment((64, 64), "float16")
        C_f = T.alloc_fragment((64, 64), "float32")
        T.copy(A, A_s)
        T.copy(B, B_f)
        T.clear(C_f)
        T.gemm(A_s, B_f, C_f)
        T.copy(C_f, C)

# CHECK: gemm_sr_form.py:20:9: remark: T.gemm reads B 'B_f' through shared memory ('B_f_stage'): B is a fragment (the sr form)
# CHECK-NOT: error:
# CHECK: B_f_stage = T.alloc_shared((4096,), "float16")
# CHECK: T.ptx_ldmatrix(B_regs, {{.*}}, B_f_stage,
# EXEC: output C shape=[64,64] dtype=float32
# EXEC-NEXT: check: PASS
