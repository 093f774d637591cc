# REQUIRES: tl-run
# A fragment that is only copied in (from shared or global), filled or
# cleared, and read by a T.Parallel at other indices than its own (a 1-D
# column statistic D[j] in a loop over (i, j); a 2-D tile read transposed) is
# replicated over the threads (each holds all of it; TileLang replicates it
# over its readers); before, "layout conflict for fragment". Exact values
# against the reference evaluator, sm_80 and sm_90a.
# RUN: %tl-run --device=cpu --check %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --target=sm_90a %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D form=1 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D form=2 -D M=8 -D N=16 --target=sm_90a %s 2>&1 | FileCheck %s --check-prefix=SMALL
# RUN: %tl-run --device=cpu --check -D form=2 -D M=8 -D N=16 %s | FileCheck %s
# RUN: %tl-opt --dump-layouts %s | FileCheck %s --check-prefix=LAYOUT
# CHECK: check: PASS
# SMALL-NOT: warning
# SMALL: check: PASS
# LAYOUT: buffer col_local: local.fragment float32[32]
# LAYOUT-NEXT: layout: REPLICATED
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def colscale(M=64, N=32, form=0):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), S: T.Tensor((N,), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            S_s = T.alloc_shared((N,), "float32")
            A_s = T.alloc_shared((N, M), "float32")
            col_local = T.alloc_fragment((N,), "float32")
            t_local = T.alloc_fragment((N, M), "float32")
            acc = T.alloc_fragment((M, N), "float32")
            T.copy(A, acc)
            if form == 0:
                T.copy(S, S_s)
                T.copy(S_s, col_local)
                for i, j in T.Parallel(M, N):
                    acc[i, j] = acc[i, j] * col_local[j] + col_local[(j + i) % N]
            elif form == 1:
                T.fill(col_local, 0.5)
                for i, j in T.Parallel(M, N):
                    acc[i, j] = acc[i, j] - col_local[j] * S[j]
            else:
                for i, j in T.Parallel(N, M):
                    A_s[i, j] = A[j, i] + S[i]
                T.copy(A_s, t_local)
                for i, j in T.Parallel(M, N):
                    acc[i, j] = acc[i, j] * t_local[j, i]
            T.copy(acc, B)

    return main
