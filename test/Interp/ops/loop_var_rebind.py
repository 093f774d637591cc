# REQUIRES: tl-run
# A loop variable may rebind the name of an enclosing loop's variable, as
# Python and TileLang allow (TileLang's deepseek_nsa kernels: "for i, j in
# T.Parallel(G, BS)" inside "for i in T.Pipelined(NS)"): each loop gets its
# own variable, and after the inner loop the name is the outer variable again.
# Exact values against the reference evaluator, sm_80 and sm_90a; the inner
# variable gets a fresh IR name (i_1).
# RUN: %tl-run --device=cpu --check %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --target=sm_90a %s | FileCheck %s
# RUN: %tl-opt --emit=tir %s | FileCheck %s --check-prefix=TIR
# CHECK: check: PASS
# TIR: for i in T.Pipelined(4, num_stages=2):
# TIR: for i_1, j in T.Parallel(16, 32):
# TIR: for i_1 in T.serial(3):
# TIR: acc[r, j] = acc[r, j] + (T.Cast("float32", i * 1000) + t[0])
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def rebind(M=16, N=32, NS=4):
    @T.prim_func
    def main(A: T.Tensor((NS, M, N), "float32"), B: T.Tensor((NS, M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            acc = T.alloc_fragment((M, N), "float32")
            A_s = T.alloc_shared((M, N), "float32")
            t = T.alloc_local((1,), "float32")
            T.clear(acc)
            for i in T.Pipelined(NS, num_stages=2):
                T.copy(A[i, :, :], A_s)
                for i, j in T.Parallel(M, N):
                    acc[i, j] += A_s[i, j] * (i + 1)
                t[0] = 0
                for k in T.serial(2):
                    for i in T.serial(3):
                        t[0] += i * (k + 1)
                # the name is the pipelined loop's variable again
                for r, j in T.Parallel(M, N):
                    acc[r, j] += i * 1000 + t[0]
                T.copy(acc, B[i, :, :])
            for i, j in T.Parallel(M, N):
                acc[i, j] = acc[i, j] * 2
    return main
