# RUN: %tl-opt --passes=pipeline %s | FileCheck %s
# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check %s | FileCheck %s --check-prefix=PASS
# Pass "pipeline" (lib/Lower/pipeline_loop.c): a shared buffer read in the
# body before the copy that fills it is a loop-carried use (iteration k reads
# the tile of iteration k - 1) and is not staged: the loop stays serial with
# its synchronous copies, and the result is the reference's.  Staged, the
# read got slot k % 3, this iteration's tile: found by test/fuzz/mutate.py
# (test/Lower/passes/pipeline.py with its two body lines swapped; the check
# failed on 2024 of 18432 elements with no diagnostic).
# CHECK: A_s = T.alloc_shared((64, 32), "float16")
# CHECK: for k in T.serial(8):
# CHECK-NEXT: if k > 0:
# CHECK-NEXT: T.copy(A_s, acc)
# CHECK-NEXT: T.copy(A[0:64, k * 32:k * 32 + 32], A_s)
# CHECK-NOT: T.async_copy
# PASS: check: PASS
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64, 256), "float16"), B: T.Tensor((64, 32), "float16")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 32), "float16")
        acc = T.alloc_shared((64, 32), "float16")
        T.clear(acc)
        for k in T.Pipelined(8, num_stages=3):
            if k > 0:
                T.copy(A_s, acc)
            T.copy(A[0, k * 32], A_s)
        T.copy(acc, B)
