# RUN: %tl-opt --emit=simt --remarks --kernel=forwarded %s 2>&1 | FileCheck %s
# RUN: %tl-opt --emit=simt --remarks --kernel=rewritten %s 2>&1 | FileCheck %s --check-prefix=STAGED
# RUN: %tl-run --device=cpu --check --kernel=forwarded %s | FileCheck %s --check-prefix=EXEC
# RUN: %tl-run --device=cpu --check --target=sm_90a --schedule-seed=3 --kernel=forwarded %s | FileCheck %s --check-prefix=EXEC
# RUN: %tl-run --device=cpu --check --kernel=rewritten %s | FileCheck %s --check-prefix=EXEC
# REQUIRES: tl-run
# The gemm-stage pass on TileLang's split-KV decode form (deepseek_mla): the scores go to a shared tile and
# back into the fragment that a FullCol T.gemm reads as A, which registers cannot hold there (every warp
# needs whole rows).  When the fragment is a plain copy of a whole shared buffer that nothing writes before
# the gemm, the gemm reads that buffer (no second shared tile: 'forwarded'); when the shared buffer is
# written in between ('rewritten'), the fragment is staged as before.  Both agree with the reference
# evaluator over a loop of 4 tiles.
import tilelang.language as T


@T.prim_func
def forwarded(S: T.Tensor((4, 64, 64), "float32"), V: T.Tensor((4, 64, 64), "float16"),
              O: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        V_s = T.alloc_shared((64, 64), "float16")
        S_shared = T.alloc_shared((64, 64), "float16")
        acc_s = T.alloc_fragment((64, 64), "float32")
        acc_s_cast = T.alloc_fragment((64, 64), "float16")
        acc_o = T.alloc_fragment((64, 64), "float32")
        T.clear(acc_o)
        for k in T.serial(4):
            T.copy(S[k, :, :], acc_s)
            T.copy(V[k, :, :], V_s)
            T.copy(acc_s, S_shared)
            T.copy(S_shared, acc_s_cast)
            for i, j in T.Parallel(64, 64):
                acc_o[i, j] *= 0.5
            T.gemm(acc_s_cast, V_s, acc_o, policy=T.GemmWarpPolicy.FullCol)
        T.copy(acc_o, O)


@T.prim_func
def rewritten(S: T.Tensor((4, 64, 64), "float32"), V: T.Tensor((4, 64, 64), "float16"),
              O: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        V_s = T.alloc_shared((64, 64), "float16")
        S_shared = T.alloc_shared((64, 64), "float16")
        acc_s = T.alloc_fragment((64, 64), "float32")
        acc_s_cast = T.alloc_fragment((64, 64), "float16")
        acc_o = T.alloc_fragment((64, 64), "float32")
        T.clear(acc_o)
        for k in T.serial(4):
            T.copy(S[k, :, :], acc_s)
            T.copy(V[k, :, :], V_s)
            T.copy(acc_s, S_shared)
            T.copy(S_shared, acc_s_cast)
            T.fill(S_shared, 0)
            T.gemm(acc_s_cast, V_s, acc_o, policy=T.GemmWarpPolicy.FullCol)
        T.copy(acc_o, O)

# CHECK: gemm_stage_forward.py:33:13: remark: T.gemm reads A 'acc_s_cast' from 'S_shared', the shared buffer it was copied from: A is a fragment and policy FullCol splits the 64x64 accumulator over 1x4 warps
# CHECK-NOT: acc_s_cast_stage
# CHECK: T.ptx_ldmatrix(A_regs, {{.*}}, S_shared,
# STAGED: gemm_stage_forward.py:53:13: remark: T.gemm reads A 'acc_s_cast' through shared memory ('acc_s_cast_stage')
# STAGED: T.ptx_ldmatrix(A_regs, {{.*}}, acc_s_cast_stage,
# EXEC: output O shape=[64,64] dtype=float32
# EXEC-NEXT: check: PASS
