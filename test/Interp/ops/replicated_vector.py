# REQUIRES: tl-run
# A small 1-D fragment written by a 1-D T.Parallel (from vectors copied in)
# and read across a 2-D T.Parallel at other indices (TileLang's mamba
# chunk_state: scale[j] in a loop over (i, j)), or as a row statistic by loops
# whose partitions differ (mamba chunk_scan: D[i] beside a gemm accumulator
# and a copied tile), is replicated: every thread computes all of it (before,
# "layout conflict"). A vector loop that also stores to global memory keeps
# the conflict (every thread would store). Exact values against the reference
# evaluator, sm_80 and sm_90a.
# RUN: %tl-run --device=cpu --check %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --target=sm_90a %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D form=1 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D form=1 --target=sm_90a %s | FileCheck %s
# RUN: %tl-opt --dump-layouts %s | FileCheck %s --check-prefix=LAYOUT
# RUN: %tl-opt --dump-layouts -D form=1 %s | FileCheck %s --check-prefix=LAYOUT1
# RUN: not %tl-opt --emit=simt -D form=2 %s 2>&1 | FileCheck %s --check-prefix=ERR
# CHECK: check: PASS
# LAYOUT: buffer s_local: local.fragment float32[32]
# LAYOUT-NEXT: layout: REPLICATED
# LAYOUT: buffer scale: local.fragment float32[32]
# LAYOUT-NEXT: layout: REPLICATED
# LAYOUT1: buffer d_local: local.fragment float32[32]
# LAYOUT1-NEXT: layout: REPLICATED
# LAYOUT1: buffer e_local: local.fragment float32[32]
# LAYOUT1-NEXT: layout: REPLICATED
# ERR: replicated_vector.py:72:17: error: layout conflict for fragment 'scale'
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def vec(M=32, N=32, K=32, form=0):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), Bm: T.Tensor((K, N), "float16"), S: T.Tensor((N,), "float32"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            S_s = T.alloc_shared((N,), "float32")
            A_s = T.alloc_shared((M, K), "float16")
            B_s = T.alloc_shared((K, N), "float16")
            s_local = T.alloc_fragment((N,), "float32")
            scale = T.alloc_fragment((N,), "float32")
            d_local = T.alloc_fragment((M,), "float32")
            e_local = T.alloc_fragment((M,), "float32")
            a_local = T.alloc_fragment((M, N), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            T.copy(S, S_s)
            T.copy(A, A_s)
            T.copy(Bm, B_s)
            if form == 0:
                T.copy(S_s, s_local)
                for i in T.Parallel(N):
                    scale[i] = s_local[i] * 2 + i
                T.copy(A_s, a_local)
                for i, j in T.Parallel(M, N):
                    acc[i, j] = a_local[j, i] * scale[j]
            elif form == 1:
                T.copy(S_s, d_local)
                for i in T.Parallel(M):
                    e_local[i] = d_local[i] * 0.5 - i
                T.clear(acc)
                T.gemm(A_s, B_s, acc)
                for i, j in T.Parallel(M, N):
                    acc[i, j] *= e_local[i]
                T.copy(A_s, a_local)
                for i, j in T.Parallel(M, K):
                    a_local[i, j] = a_local[i, j] * d_local[i]
                T.gemm(a_local, B_s, acc)
            else:
                for i in T.Parallel(N):
                    scale[i] = S_s[i] * 2
                    C[0, i] = scale[i]
                for i, j in T.Parallel(M, N):
                    acc[i, j] = scale[j]
            T.copy(acc, C)
    return main
