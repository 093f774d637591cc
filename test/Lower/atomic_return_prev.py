# REQUIRES: tl-run
# RUN: %tl-opt %s | FileCheck %s
# RUN: %tl-run --device=cpu --check %s | FileCheck %s --check-prefix=CPU
# RUN: sed 's/, return_prev=True//' %s > %t.py
# RUN: not %tl-opt %t.py 2>&1 | FileCheck %s --check-prefix=NOVAL
# The value form of T.atomic_add (return_prev=True): the old contents of one
# global element, as the intrinsic T.ptx_atomic_add with the value converted
# to the destination's dtype (docs/simt-ir.md "Atomics").  Two blocks add 1
# to every element of C; each iteration keeps the value it replaced.
import tilelang.language as T


@T.prim_func
def main(C: T.Tensor((4, 8), "float32"), O: T.Tensor((2, 32), "float32")):
    with T.Kernel(2, threads=32) as bx:
        for i in T.Parallel(32):
            O[bx, i] = T.atomic_add(C[i // 8, i % 8], T.float16(1.0), return_prev=True)

# CHECK: O[bx, i] = T.ptx_atomic_add(C, i // 8 * 8 + i % 8, 1.0, True)
# CPU: check: PASS
# NOVAL: error: T.atomic_add is a statement and has no value (pass return_prev=True to use the old value)
