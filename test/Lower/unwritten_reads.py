# RUN: %tl-opt --emit=simt -D case=self_update %s 2>&1 >/dev/null | FileCheck %s --check-prefix=SELF
# RUN: %tl-opt --emit=simt -D case=accumulate %s 2>&1 >/dev/null | FileCheck %s --check-prefix=ACC
# RUN: %tl-opt --emit=simt -D case=loop_first %s 2>&1 >/dev/null | FileCheck %s --check-prefix=FIRST
# RUN: %tl-opt --emit=simt -D case=cleared %s 2>&1 >/dev/null | count 0
# RUN: %tl-opt --emit=simt -D case=guarded %s 2>&1 >/dev/null | count 0
# Reads of buffers that no write reaches (lib/Lower/static_check.c, check 2),
# the cases test/fuzz/mutate.py found silent (the check failed against
# `expected nan` with no diagnostic): a store's value is read before the
# store writes (F[i, j] = F[i, j] * 2 with F never written); T.gemm reads its
# accumulator unless clear_accum=True; an unguarded read in a loop before the
# loop's write reads the unwritten value in the first iteration.  A read
# under `if k > 0:` is reached by the previous iteration's write.
# SELF: unwritten_reads.py:32:39: warning: local.fragment buffer 'F' is read here, but no write of it reaches this read: its value is undefined
# ACC: unwritten_reads.py:35:36: warning: local.fragment buffer 'F' is read here, but no write of it reaches this read: its value is undefined
# FIRST: unwritten_reads.py:38:28: warning: shared.dyn buffer 'S' is read here, but no write of it reaches this read: its value is undefined
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[2])
def kernel(case="self_update"):

    @T.prim_func
    def main(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128) as bx:
            F = T.alloc_fragment((64, 64), "float32")
            S = T.alloc_shared((64, 64), "float16")
            S2 = T.alloc_shared((64, 64), "float16")
            T.copy(B, S2)
            if case == "self_update":
                for i, j in T.Parallel(64, 64):
                    F[i, j] = F[i, j] * 2.0
            elif case == "accumulate":
                for k in T.serial(2):
                    T.gemm(S2, S2, F)
            elif case == "loop_first":
                for k in T.serial(2):
                    T.copy(S, C)
                    T.copy(A, S)
                T.clear(F)
            elif case == "cleared":
                for k in T.serial(2):
                    T.gemm(S2, S2, F, clear_accum=True)
            else:
                T.clear(F)
                for k in T.serial(2):
                    if k > 0:
                        T.copy(S, C)
                    T.copy(A, S)
            T.copy(F, C)

    return main
