# RUN: not %tl-opt --emit=simt -D case=row_alias %s 2>&1 | FileCheck %s --check-prefix=ROW
# RUN: not %tl-opt --passes=check-supported -D case=row_alias %s 2>&1 | FileCheck %s --check-prefix=ROW
# RUN: not %tl-opt --emit=simt -D case=local_const %s 2>&1 | FileCheck %s --check-prefix=LOCAL
# RUN: not %tl-opt --emit=simt -D case=frag_const %s 2>&1 | FileCheck %s --check-prefix=FRAG
# RUN: not %tl-opt --emit=simt -D case=block_range %s 2>&1 | FileCheck %s --check-prefix=BLOCK
# RUN: %tl-opt --emit=simt -D case=guarded %s 2>&1 | FileCheck %s --check-prefix=OK --allow-empty
# RUN: %tl-opt --emit=simt -D case=dependent %s 2>&1 | FileCheck %s --check-prefix=OK --allow-empty
# RUN: %tl-opt --emit=simt -D case=strided_mod %s 2>&1 | FileCheck %s --check-prefix=OK --allow-empty
# RUN: %tl-opt --emit=simt -D case=unwritten %s 2>&1 >/dev/null | FileCheck %s --check-prefix=UNWRITTEN
# RUN: %tl-opt --emit=simt -D case=read_before_write %s 2>&1 >/dev/null | FileCheck %s --check-prefix=RBW
# RUN: %tl-opt --emit=simt -D case=loop_carried %s 2>&1 | FileCheck %s --check-prefix=OK --allow-empty
# RUN: not %tl-opt --emit=simt -D case=parallel_tid %s 2>&1 | FileCheck %s --check-prefix=PAR
# RUN: not %tl-opt --emit=simt -D case=parallel_branch %s 2>&1 | FileCheck %s --check-prefix=PARBR
# RUN: not %tl-opt --emit=simt -D case=parallel_local %s 2>&1 | FileCheck %s --check-prefix=PARLOC
# RUN: %tl-opt --emit=simt -D case=parallel_uniform %s 2>&1 | FileCheck %s --check-prefix=PAROK
# REQUIRES: tl-run
# RUN: not %tl-run --device=cpu --check -D case=parallel_tid %s 2>&1 | FileCheck %s --check-prefix=PAR
# RUN: not %tl-run --device=cpu --check -D case=parallel_uniform %s 2>&1 | FileCheck %s --check-prefix=PARREF
# RUN: %tl-run --device=cpu --check -D case=parallel_serial %s | FileCheck %s --check-prefix=PASS
# RUN: %tl-run --device=cpu --check -D case=guarded %s | FileCheck %s --check-prefix=PASS
# Issue 15 class 3: static checks before lowering (lib/Lower/static_check.c).

# ROW: static_checks.py:53:{{[0-9]+}}: error: index of dimension 1 of global buffer 'B' takes the values 1 to 8, outside its extent 8 (the flat offset would reach another row or another buffer)
# LOCAL: static_checks.py:56:{{[0-9]+}}: error: index 4 of dimension 0 of local buffer 'L' is out of bounds (extent 4)
# FRAG: static_checks.py:61:{{[0-9]+}}: error: index -1 of dimension 1 of local.fragment buffer 'F' is out of bounds (extent 8)
# BLOCK: static_checks.py:63:{{[0-9]+}}: error: index of dimension 0 of global buffer 'B' takes the values 0 to 4, outside its extent 4
# OK-NOT: error
# OK-NOT: warning
# UNWRITTEN: static_checks.py:84:{{[0-9]+}}: warning: local.fragment buffer 'F' is read here, but no write of it reaches this read: its value is undefined
# RBW: static_checks.py:88:{{[0-9]+}}: warning: shared.dyn buffer 'S' is read here, but no write of it reaches this read: its value is undefined
# PAR: static_checks.py:100:23: error: T.Parallel in per-thread code reads 'tn', a value computed from per-thread data: the loop's iterations are spread over the threads of the block (as in a tile program), so an iteration must not depend on the thread that runs it; write T.serial (or T.vectorized) for a loop of each thread
# PAR: static_checks.py:98:17: note: 'tn' takes a per-thread value here
# PARBR: static_checks.py:104:21: error: T.Parallel in per-thread code under a branch or loop that the threads may take apart: the loop's iterations are spread over the threads of the block, so every thread must reach it (branch on block indices, parameters or values every thread holds alike), or write T.serial for a loop of each thread
# PARLOC: static_checks.py:110:21: error: T.Parallel in per-thread code writes the local buffer 'L': the loop's iterations are spread over the threads of the block, and each thread holds its own part of 'L' (not supported yet in per-thread code); write a T.serial loop (each thread runs it whole) or go through a shared buffer
# PAROK-NOT: error
# PAROK: T.get_thread_binding
# PARREF: static_checks.py:116:17: error: T.Parallel in per-thread code: the reference evaluator runs a per-thread kernel one thread at a time and does not spread this loop over the threads as the lowering does; run the kernel on the SIMT executor without --check and compare with another reference (NumPy)
# PASS: check: PASS
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=None)
def checks(case="row_alias"):

    @T.prim_func
    def main(A: T.Tensor((4, 8), "float32"), B: T.Tensor((4, 8), "float32")):
        with T.Kernel(5 if case == "block_range" else 1, threads=32) as bx:
            if case == "row_alias":
                # j + 1 reaches 8 in a dimension of extent 8: B[r, 8] is B[r + 1, 0] once flattened
                tx = T.get_thread_binding(0)
                for j in T.serial(8):
                    B[tx // 8, j + 1] = A[tx // 8, j]
            elif case == "local_const":
                L = T.alloc_local((4,), "float32")
                L[4] = A[0, 0]
                B[0, 0] = L[0]
            elif case == "frag_const":
                F = T.alloc_fragment((4, 8), "float32")
                T.copy(A, F)
                B[0, 0] = F[1, -1]
            elif case == "block_range":
                B[bx, 0] = A[0, 0]
            elif case == "guarded":
                tx = T.get_thread_binding(0)
                for j in T.serial(8):
                    if j < 7:
                        B[tx // 8, j + 1] = A[tx // 8, j]
                    else:
                        B[tx // 8, 0] = A[tx // 8, j]
            elif case == "dependent":
                # i + (7 - i) is always 7: the range of each term alone says nothing
                tx = T.get_thread_binding(0)
                for i in T.serial(8):
                    B[tx // 8, i + (7 - i)] = A[tx // 8, i]
            elif case == "strided_mod":
                # (4 * i) % 8 takes only 0 and 4
                tx = T.get_thread_binding(0)
                for i in T.serial(2):
                    B[tx // 8, (4 * i) % 8 + 3] = A[tx // 8, i]
            elif case == "unwritten":
                F = T.alloc_fragment((4, 8), "float32")
                for i, j in T.Parallel(4, 8):
                    B[i, j] = F[i, j] + A[i, j]
            elif case == "read_before_write":
                # S is read (line 78) before the store that fills it (line 79); no loop joins them
                S = T.alloc_shared((4, 8), "float32")
                B[0, 0] = S[0, 0]
                S[0, 0] = A[0, 0]
            elif case == "loop_carried":
                # a later iteration reads what the previous one wrote: reached, no warning
                F = T.alloc_fragment((1,), "float32")
                for k in T.serial(8):
                    if k > 0:
                        B[0, k] = F[0]
                    F[0] = A[0, k]
            elif case == "parallel_tid":
                tn = T.get_thread_binding(0)
                for k in T.Parallel(8):
                    B[tn // 8, k] = A[tn // 8, k]
            elif case == "parallel_branch":
                tn = T.get_thread_binding(0)
                if tn < 4:
                    for k in T.Parallel(8):
                        B[0, k] = A[0, k]
            elif case == "parallel_local":
                tn = T.get_thread_binding(0)
                L = T.alloc_local((8,), "float32")
                for k in T.Parallel(8):
                    L[k] = A[0, k]
                B[tn % 4, tn // 4] = L[tn % 8]
            elif case == "parallel_uniform":
                # spread over the threads as in a tile program; the per-thread store after it reads the thread
                tn = T.get_thread_binding(0)
                S = T.alloc_shared((4, 8), "float32")
                for i, k in T.Parallel(4, 8):
                    S[i, k] = A[i, k] * 2.0
                B[tn // 8, tn % 8] = S[tn // 8, tn % 8] + 1.0
            elif case == "parallel_frag":
                # each thread writes its own element of F: the loop would read elements no thread of it wrote
                tn = T.get_thread_binding(0)
                F = T.alloc_fragment((32,), "float32")
                F[tn] = A[tn // 8, tn % 8]
                for k in T.Parallel(32):
                    B[k // 8, k % 8] = F[(k + 1) % 32]
            else:
                # parallel_serial: the per-thread loop spelled T.serial has one meaning everywhere
                tn = T.get_thread_binding(0)
                if tn < 4:
                    for k in T.serial(8):
                        B[tn, k] = A[tn, k]

    return main

# RUN: not %tl-opt --emit=simt -D case=parallel_frag %s 2>&1 | FileCheck %s --check-prefix=PARFRAG
# PARFRAG: static_checks.py:125:40: error: T.Parallel in per-thread code reads 'F', a fragment element (each thread holds its own part of a fragment)
