# Column statistics (docs/layouts.md "Column statistics") and where they stop.  form=0: T.reduce_sum(f, cs,
# dim=0) of a 4x4 fragment over 32 threads (TileLang's mhc_pre sinkhorn step), cs[j] read beside f: cs takes
# the COLS layout of f's ROWS layout (element j on thread (j/4) % 8 of each of the 4 row groups), the reduce
# folds each thread's rows and combines the groups by shuffles 16 and 8, and the loop reads cs in its own
# register.  form=1: cs[j] read by a loop that another fragment (PLAN) partitions; form=2: cs also the row
# statistics of another reduce; form=3: cs[j] read by a loop over shared memory only; form=4: cs[j] stored by
# a loop over (i, j) (each row would store its own cs[j]): located conflicts.
# gk: a T.gemm accumulator reduced into column statistics: not lowered yet, a located error.
# RUN: %tl-opt --kernel=cs_forms --dump-layouts %s | FileCheck %s --check-prefix=LAYOUT
# RUN: %tl-opt --kernel=cs_forms --emit=simt %s | FileCheck %s --check-prefix=SIMT
# RUN: %tl-run --kernel=cs_forms --device=cpu --check %s | FileCheck %s --check-prefix=EXEC
# RUN: not %tl-opt --kernel=cs_forms --emit=simt -D form=1 %s 2>&1 | FileCheck %s --check-prefix=ERR1
# RUN: not %tl-opt --kernel=cs_forms --emit=simt -D form=2 %s 2>&1 | FileCheck %s --check-prefix=ERR2
# RUN: not %tl-opt --kernel=cs_forms --emit=simt -D form=3 %s 2>&1 | FileCheck %s --check-prefix=ERR3
# RUN: not %tl-opt --kernel=cs_forms --emit=simt -D form=4 %s 2>&1 | FileCheck %s --check-prefix=ERR4
# RUN: not %tl-opt --emit=simt --kernel=gk %s 2>&1 | FileCheck %s --check-prefix=GEMM
# LAYOUT: buffer cs: local.fragment float32[4]
# LAYOUT-NEXT: layout: COLS (column statistics of a ROWS layout of 4 groups of 8 threads: element c in thread (c/4) % 8 of each of the 4 groups holding rows), 4 registers per thread
# LAYOUT-NEXT: rule: reg = ((c/4) / 8)*4 + c % 4; holders h*8 + (c/4) % 8, h < 4
# LAYOUT-NEXT: set by T.reduce_sum at col_stats.py:[[@LINE+29]]:13
# LAYOUT-NEXT: replicas: 4 threads per element (replica 0 shown; element 0 is in T0:r0 T8:r0 T16:r0 T24:r0)
# SIMT: red_acc[rb_{{[0-9]+}} * 4 + rl] = red_acc[rb_{{[0-9]+}} * 4 + rl] + f[ra_{{[0-9]+}} * 4 + (rb_{{[0-9]+}} * 4 + rl)]
# SIMT: red_acc[rk_1] = red_acc[rk_1] + T.shfl_xor(red_acc[rk_1], 16, 32)
# SIMT-NEXT: red_acc[rk_1] = red_acc[rk_1] + T.shfl_xor(red_acc[rk_1], 8, 32)
# SIMT: cs[rk_2] = red_acc[rk_2]
# SIMT: f[{{.*}}] = f[{{.*}}] / cs[{{.*}}]
# EXEC: check: PASS
# ERR1: col_stats.py:[[@LINE+23]]:17: error: layout conflict for fragment 'cs': the T.reduce_sum here makes it the column statistics of 'f' (reduced along dim 0 and read as cs[j] beside it), but this T.Parallel loop is partitioned by a fragment of another layout
# ERR1: col_stats.py:[[@LINE+20]]:13: note: the T.reduce_sum that sets the layout of 'cs' is here
# ERR2: col_stats.py:[[@LINE+24]]:17: error: layout conflict for fragment 'cs': the T.reduce_sum here makes it the column statistics of 'f' (reduced along dim 0 and read as cs[j] beside it), but this op reads or writes it as row statistics
# ERR4: col_stats.py:[[@LINE+28]]:17: error: layout conflict for fragment 'cs': this T.Parallel loop indexes it differently from the T.reduce_sum that distributes it over the threads
# ERR3: col_stats.py:[[@LINE+24]]:17: error: layout conflict for fragment 'cs': the T.reduce_sum here makes it the column statistics of 'f' (reduced along dim 0 and read as cs[j] beside it), but this T.Parallel loop indexes no fragment by all its variables; lowering it is not supported yet
import tilelang
import tilelang.language as T


@tilelang.jit
def cs_forms(M=4, N=4, form=0):
    @T.prim_func
    def cs_forms_main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), S: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            f = T.alloc_fragment((M, N), "float32")
            g = T.alloc_fragment((M, N), "float32")
            cs = T.alloc_fragment((N,), "float32")
            a_s = T.alloc_shared((M, N), "float32")
            T.copy(A, f)
            T.copy(A, g)
            T.copy(A, a_s)
            T.reduce_sum(f, cs, dim=0)
            if form == 1:
                for i, j in T.Parallel(M, N):
                    g[i, j] = g[i, j] + cs[j]
            elif form == 2:
                T.reduce_max(g, cs, dim=1)
            elif form == 3:
                for i, j in T.Parallel(M, N):
                    a_s[i, j] = a_s[i, j] / cs[j]
            elif form == 4:
                for i, j in T.Parallel(M, N):
                    cs[j] = f[i, j]
            for i, j in T.Parallel(M, N):
                f[i, j] = f[i, j] / cs[j]
            T.copy(f, B)
            T.copy(cs, S)
            if form != 0:
                T.copy(g, A)
                T.copy(a_s, A)

    return cs_forms_main

@tilelang.jit
def gk(M=64, N=64, K=32):
    @T.prim_func
    def gk_main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            a_s = T.alloc_shared((M, K), "float16")
            b_s = T.alloc_shared((K, N), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            cs = T.alloc_fragment((N,), "float32")
            T.copy(A, a_s)
            T.copy(B, b_s)
            T.gemm(a_s, b_s, acc, clear_accum=True)
            T.reduce_sum(acc, cs, dim=0)  # GEMM: col_stats.py:[[@LINE]]:13: error: T.reduce_sum of the T.gemm accumulator 'acc' along dim 0 into column statistics read beside it is not lowered yet
            for i, j in T.Parallel(M, N):
                acc[i, j] = acc[i, j] / cs[j]
            T.copy(acc, C)

    return gk_main
