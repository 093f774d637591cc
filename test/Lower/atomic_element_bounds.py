# RUN: not %tl-opt --emit=simt -D case=overflow %s 2>&1 | FileCheck %s --check-prefix=OVF
# RUN: not %tl-opt --emit=simt -D case=row %s 2>&1 | FileCheck %s --check-prefix=ROW
# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check -D case=guarded %s | FileCheck %s --check-prefix=PASS
# Issue 15 (classes 1 and 3): the element destination of T.atomic_add's
# scalar form gets the static per-dimension bounds check of a store
# (lib/Lower/static_check.c, check 1).  Found by test/fuzz/mutate.py in
# test/Lower/passes/atomic.py with `bx * 4 + i` -> `bx * 2147483647 + i`: the
# int32 index wrapped in the lowered flat offset and the executor added into
# row 2, while the reference evaluator skipped the out-of-bounds element --
# a silent check failure.  Now a located error names the range (and the
# int32 overflow); a destination guarded by a T.if is left to run time.
# OVF: atomic_element_bounds.py:30:{{[0-9]+}}: error: index of dimension 0 of global buffer 'C' takes the values 0 to 2147483650, outside its extent 32 (its int32 arithmetic overflows, and the wrapped offset would reach another element)
# ROW: atomic_element_bounds.py:32:{{[0-9]+}}: error: index of dimension 1 of global buffer 'C' takes the values 1 to 16, outside its extent 16 (the flat offset would reach another row or another buffer)
# PASS: check: PASS
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=None)
def kernel(case="overflow"):

    @T.prim_func
    def main(A: T.Tensor((32, 16), "float16"), C: T.Tensor((32, 16), "float32")):
        with T.Kernel(2, threads=64) as bx:
            A_s = T.alloc_shared((16, 16), "float16")
            T.copy(A[bx * 16, 0], A_s)
            for i, j in T.Parallel(4, 16):
                if case == "overflow":
                    T.atomic_add(C[bx * 2147483647 + i, j], T.Cast("float32", A_s[i, j]) * 2.0)
                elif case == "row":
                    T.atomic_add(C[bx * 4 + i, j + 1], T.Cast("float32", A_s[i, j]))
                else:
                    if bx * 4 + i < 8:
                        T.atomic_add(C[bx * 4 + i, j], T.Cast("float32", A_s[i, j]))

    return main
