# Stores to row statistics: d, the row maxima of the 16x16 fragment f (REDUCER over f's ROWS layout, row i on
# the 4 threads of group i % 8, each with its own copy of d[i]).  form=0, the legitimate forms: d[i] read in
# loops over (i, j) partitioned by f (the rescale f[i, j] *= d[i]), stored in a loop over i alone, and stored in
# a loop over (i, j) that no fragment partitions (row i runs on every holder of d[i], j serially); at M=64,
# N=4 (one thread per row) a store d[i] = f[i, j] beside f is kept too.  form=1..3: a store d[i] = ... in a
# loop over (i, j) partitioned by f would update only the copies of the threads that run (i, j): located
# conflicts.  fa: the same store beside a T.gemm accumulator (FlashAttention's scores_max, 4 lanes a row).
# RUN: %tl-run --device=cpu --check --kernel=rs_forms %s | FileCheck %s --check-prefix=EXEC
# RUN: %tl-run --device=cpu --check --kernel=rs_forms -D M=64 -D N=4 -D form=1 %s | FileCheck %s --check-prefix=EXEC
# RUN: not %tl-opt --kernel=rs_forms --emit=simt -D form=1 %s 2>&1 | FileCheck %s --check-prefix=ERR1
# RUN: not %tl-opt --kernel=rs_forms --emit=simt -D form=2 %s 2>&1 | FileCheck %s --check-prefix=ERR2
# RUN: not %tl-opt --kernel=rs_forms --emit=simt -D form=3 %s 2>&1 | FileCheck %s --check-prefix=ERR3
# RUN: not %tl-opt --kernel=fa --emit=simt %s 2>&1 | FileCheck %s --check-prefix=FA
# EXEC: check: PASS
# ERR1: row_stat_stores.py:[[@LINE+30]]:21: error: layout conflict for fragment 'd': this store writes the row statistic 'd'[i] inside a T.Parallel loop over (i, j) partitioned by 'f', whose row 0 is spread over 4 threads that each hold their own copy of 'd'[0]; only the threads that run iteration (i, j) would update theirs, so the copies would diverge; store it in a loop over i alone (for i in T.Parallel(...)) or compute it with T.reduce
# ERR1: row_stat_stores.py:[[@LINE+19]]:13: note: the T.reduce_max that sets the layout of 'd' is here
# ERR2: row_stat_stores.py:[[@LINE+32]]:21: error: layout conflict for fragment 'd': this store writes the row statistic 'd'[i] inside a T.Parallel loop over (i, j) partitioned by 'f'
# ERR3: row_stat_stores.py:[[@LINE+35]]:25: error: layout conflict for fragment 'd': this store writes the row statistic 'd'[i] inside a T.Parallel loop over (i, j) partitioned by 'f'
# FA: row_stat_stores.py:[[@LINE+56]]:13: error: layout conflict for fragment 'm': this store writes the row statistic 'm'[i] inside a T.Parallel loop over (i, j) partitioned by 'acc_s', whose row 0 is spread over 4 threads
# FA: row_stat_stores.py:[[@LINE+53]]:9: note: the T.reduce_max that sets the layout of 'm' is here
import tilelang
import tilelang.language as T


@tilelang.jit
def rs_forms(M=16, N=16, form=0):
    @T.prim_func
    def rs_forms_main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), S: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            f = T.alloc_fragment((M, N), "float32")
            d = T.alloc_fragment((M,), "float32")
            a_s = T.alloc_shared((M, N), "float32")
            T.copy(A, f)
            T.copy(A, a_s)
            T.reduce_max(f, d, dim=1)
            if form == 0:
                for i, j in T.Parallel(M, N):
                    f[i, j] = f[i, j] - d[i]
                for i in T.Parallel(M):
                    d[i] = d[i] * 0.5
                for i, j in T.Parallel(M, N):
                    d[i] = d[i] + a_s[i, j]
            elif form == 1:
                for i, j in T.Parallel(M, N):
                    d[i] = f[i, j]
            elif form == 2:
                for i, j in T.Parallel(M, N):
                    f[i, j] = f[i, j] * d[i]
                    d[i] = d[i] * 2
            elif form == 3:
                for i, j in T.Parallel(M, N):
                    if j > 0:
                        d[i] = T.max(d[i], f[i, j])
            for i, j in T.Parallel(M, N):
                f[i, j] = f[i, j] * d[i]
            T.copy(f, B)
            T.copy(d, S)

    return rs_forms_main


@T.prim_func
def fa(Q: T.Tensor((64, 32), "float16"), K: T.Tensor((64, 32), "float16"), O: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        Q_s = T.alloc_shared((64, 32), "float16")
        K_s = T.alloc_shared((64, 32), "float16")
        acc_s = T.alloc_fragment((64, 64), "float32")
        m = T.alloc_fragment((64,), "float32")
        T.copy(Q, Q_s)
        T.copy(K, K_s)
        T.clear(acc_s)
        T.gemm(Q_s, K_s, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
        T.reduce_max(acc_s, m, dim=1)
        for i, j in T.Parallel(64, 64):
            m[i] = T.max(m[i], acc_s[i, j])
        for i, j in T.Parallel(64, 64):
            acc_s[i, j] = acc_s[i, j] - m[i]
        T.copy(acc_s, O)
