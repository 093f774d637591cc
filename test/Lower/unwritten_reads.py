# RUN: %tl-opt --emit=simt -D case=self_update %s 2>&1 >/dev/null | FileCheck %s --check-prefix=SELF
# RUN: %tl-opt --emit=simt -D case=accumulate %s 2>&1 >/dev/null | FileCheck %s --check-prefix=ACC
# RUN: %tl-opt --emit=simt -D case=loop_first %s 2>&1 >/dev/null | FileCheck %s --check-prefix=FIRST
# RUN: %tl-opt --emit=simt -D case=cleared %s 2>&1 >/dev/null | count 0
# RUN: %tl-opt --emit=simt -D case=guarded %s 2>&1 >/dev/null | count 0
# RUN: %tl-opt --emit=simt -D case=partial %s 2>&1 >/dev/null | FileCheck %s --check-prefix=PARTIAL
# RUN: %tl-opt --emit=simt -D case=partial_guarded %s 2>&1 >/dev/null | count 0
# Reads of buffers that no write reaches (lib/Lower/static_check.c, check 2),
# the cases test/fuzz/mutate.py found silent (the check failed against
# `expected nan` with no diagnostic): a store's value is read before the
# store writes (F[i, j] = F[i, j] * 2 with F never written); T.gemm reads its
# accumulator unless clear_accum=True; an unguarded read in a loop before the
# loop's write reads the unwritten value in the first iteration.  A read
# under `if k > 0:` is reached by the previous iteration's write.  Check 4: a
# fragment written in columns 0..62 only (T.Parallel(64, 63)) and read in all
# 64 (found by the fuzzer in test/Lower/versioning.py with an extent 64 -> 63:
# the reference read NaN, the executor a stale register); a read guarded by
# j < 63 is fine.
# SELF: unwritten_reads.py:40:39: warning: local.fragment buffer 'F' is read here, but no write of it reaches this read: its value is undefined
# ACC: unwritten_reads.py:43:36: warning: local.fragment buffer 'F' is read here, but no write of it reaches this read: its value is undefined
# FIRST: unwritten_reads.py:46:28: warning: shared.dyn buffer 'S' is read here, but no write of it reaches this read: its value is undefined
# PARTIAL: unwritten_reads.py:57:40: warning: local.fragment buffer 'F' is read here at index 63 of dimension 1, but its writes only cover 0 to 62 there: that element's value is undefined
# PARTIAL-NEXT: C[i, j] = F[i, j]
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
            elif case == "partial" or case == "partial_guarded":
                for i, j in T.Parallel(64, 63):
                    F[i, j] = 1.0
                for i, j in T.Parallel(64, 64):
                    if case == "partial" or j < 63:
                        C[i, j] = F[i, j]
            else:
                T.clear(F)
                for k in T.serial(2):
                    if k > 0:
                        T.copy(S, C)
                    T.copy(A, S)
            T.copy(F, C)

    return main
