# REQUIRES: tl-run
# RUN: not %tl-run --device=cpu --check -D case=waw_warps %s 2>&1 | FileCheck %s --check-prefix=WAW
# RUN: not %tl-run --device=cpu --check -D case=raw %s 2>&1 | FileCheck %s --check-prefix=RAW
# RUN: %tl-run --device=cpu --check -D case=raw_sync %s | FileCheck %s --check-prefix=PASS
# RUN: not %tl-run --device=cpu --check -D case=raw_blocks %s 2>&1 | FileCheck %s --check-prefix=RAWB
# RUN: not %tl-run --device=cpu --check -D case=war_blocks %s 2>&1 | FileCheck %s --check-prefix=WARB
# RUN: %tl-run --device=cpu --check -D case=same_value %s | FileCheck %s --check-prefix=PASS
# RUN: %tl-run --device=cpu --check -D case=atomics %s | FileCheck %s --check-prefix=PASS
# RUN: not %tl-run --device=cpu --check -D case=atomic_and_store %s 2>&1 | FileCheck %s --check-prefix=MIX
# RUN: %tl-run --device=cpu --check -D case=rows %s | FileCheck %s --check-prefix=PASS
# RUN: %tl-opt --emit=simt -D case=rows %s | FileCheck %s --check-prefix=ROWS
# Issue 15 class 6: global-memory races on the SIMT executor (lib/Interp/simt_grace.c),
# 2 blocks of 64 threads (two warps each).  Each error names both accesses:
# thread, block and source line.

# WAW: race_global.py:39:{{[0-9]+}}: error: data race on global memory: thread 32 writes 'B'[0] (line 39), which thread 0 of block (0, 0, 0) (line 39) also wrote with no synchronisation in between; add a T.sync_threads() between them or give the element one writer (block (0, 0, 0))
# RAW: race_global.py:47:{{[0-9]+}}: error: data race on global memory: thread 1 reads 'B'[0] (line 47), which thread 0 of block (0, 0, 0) (line 45) wrote with no synchronisation in between
# RAWB: race_global.py:62:{{[0-9]+}}: error: data race on global memory: thread 0 reads 'B'[0] (line 62), which thread 0 of block (0, 0, 0) (line 60) wrote in another block; blocks are unordered{{.*}} (block (1, 0, 0))
# WARB: race_global.py:70:{{[0-9]+}}: error: data race on global memory: thread 0 writes 'B'[1] (line 70), which thread 0 of block (0, 0, 0) (line 68) read in another block{{.*}} (block (1, 0, 0))
# MIX: race_global.py:84:{{[0-9]+}}: error: data race on global memory: thread 0 adds atomically to 'B'[0] (line 84), which thread 0 of block (0, 0, 0) (line 82) also wrote in another block
# PASS: check: PASS
# ROWS: if T.get_thread_binding(0) % {{[0-9]+}} == 0:
# ROWS-NEXT: B[
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=None)
def race(case="waw_warps"):

    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(2, threads=64) as bx:
            if case == "waw_warps":
                # the two warps of block 0 store different values to B[0]
                tx = T.get_thread_binding(0)
                if bx == 0:
                    if tx % 32 == 0:
                        B[0] = A[0, tx]
            elif case == "raw":
                # thread 1 reads B[0], which thread 0 wrote, with no barrier
                tx = T.get_thread_binding(0)
                if bx == 0:
                    if tx == 0:
                        B[0] = A[0, 0]
                    if tx == 1:
                        B[1] = B[0] + 1.0
            elif case == "raw_sync":
                tx = T.get_thread_binding(0)
                if bx == 0 and tx == 0:
                    B[0] = A[0, 0]
                T.sync_threads()
                if bx == 0 and tx == 1:
                    B[1] = B[0] + 1.0
            elif case == "raw_blocks":
                # block 1 reads B[0], which block 0 wrote
                tx = T.get_thread_binding(0)
                if tx == 0:
                    if bx == 0:
                        B[0] = A[0, 0]
                    else:
                        B[1] = B[0]
            elif case == "war_blocks":
                # block 1 writes B[1], which block 0 read
                tx = T.get_thread_binding(0)
                if tx == 0:
                    if bx == 0:
                        B[0] = B[1]
                    else:
                        B[1] = A[0, 0]
            elif case == "same_value":
                # every thread of both blocks stores the same value: no order can change the result
                B[0] = A[0, 0]
            elif case == "atomics":
                F = T.alloc_fragment((64,), "float32")
                T.copy(A[bx, 0:64], F)
                T.atomic_add(B[0:64], F)
            elif case == "atomic_and_store":
                tx = T.get_thread_binding(0)
                if tx == 0:
                    if bx == 0:
                        B[0] = A[0, 0]
                    else:
                        T.atomic_add(B[0], A[0, 1])
            else:
                # rows: a row sum held by several lanes (ROWS layout) is stored by one replica
                X = T.alloc_fragment((64, 64), "float32")
                S = T.alloc_fragment((64,), "float32")
                T.copy(A, X)
                T.reduce_sum(X, S, dim=1)
                for i in T.Parallel(64):
                    B[i] = S[i] * 2.0

    return main
