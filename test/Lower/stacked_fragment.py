# Stacked reads of a fragment (docs/layouts.md "Stacked fragments") and where
# they stop. form=0: F[k, j] read under a serial k by a loop that indexes no
# fragment by its variables has no partition to stack on: an irregular use, F
# replicated as before. form=1: F[k, j] beside a vector of its trailing shape:
# STACKED over the vector's layout, the read a register of the thread's own
# (reg = k*nregs + reg). form=2: a copy of two rows of F into a 2-D fragment
# is not a row of a stacked fragment: a located conflict.
# RUN: %tl-opt --dump-layouts %s | FileCheck %s --check-prefix=REPL
# RUN: %tl-opt --dump-layouts -D form=1 %s | FileCheck %s --check-prefix=STACK
# RUN: %tl-opt --emit=simt -D form=1 %s | FileCheck %s --check-prefix=SIMT
# RUN: not %tl-opt --emit=simt -D form=2 %s 2>&1 | FileCheck %s --check-prefix=ERR
# RUN: %tl-run --device=cpu --check %s | FileCheck %s --check-prefix=EXEC
# RUN: %tl-run --device=cpu --check -D form=1 %s | FileCheck %s --check-prefix=EXEC
# REPL: buffer F: local.fragment float32[4, 64]
# REPL-NEXT: layout: REPLICATED
# STACK: buffer F: local.fragment float32[4, 64]
# STACK-NEXT: layout: STACKED (the layout of its last 1 dim repeated over its first 1, 4 times), 4 registers per thread
# STACK-NEXT: rule: element (l, n) on the threads of n in the base below; reg = l*1 + reg(n)
# STACK-NEXT: base: layout: PLAN
# SIMT: F[sl] = A[sl, T.get_thread_binding(0)]
# SIMT: for k in T.serial(4):
# SIMT-NEXT: v[0] = v[0] + F[k] * T.Cast("float32", k + 1)
# SIMT: Out[k, T.get_thread_binding(0)] = v[0] - F[k]
# EXEC-NOT: check: FAIL
# EXEC: check: PASS
# ERR: stacked_fragment.py:[[@LINE+27]]:17: error: layout conflict for fragment 'F': this op reads it as F[l, n] on the threads that hold element n of 'D2', but that fragment is replicated, or its shape is not the trailing dims of this one's
import tilelang
import tilelang.language as T


@tilelang.jit
def kern(form=0):
    @T.prim_func
    def main(A: T.Tensor((4, 64), "float32"), Out: T.Tensor((4, 64), "float32")):
        with T.Kernel(1, threads=64) as bx:
            F = T.alloc_fragment((4, 64), "float32")
            v = T.alloc_fragment((64,), "float32")
            D2 = T.alloc_fragment((2, 64), "float32")
            T.copy(A, F)
            if form == 0:
                for k in T.serial(4):
                    for j in T.Parallel(64):
                        Out[k, j] = F[k, j] * 2
            elif form == 1:
                T.clear(v)
                for k in T.serial(4):
                    for j in T.Parallel(64):
                        v[j] += F[k, j] * (k + 1)
                for k in T.serial(4):
                    for j in T.Parallel(64):
                        Out[k, j] = v[j] - F[k, j]
            else:
                T.copy(F[0:2, :], D2)
                T.copy(D2, Out[0:2, :])

    return main
