# RUN: not %tl-opt --emit=simt %s 2>&1 | FileCheck %s
# Only relaxed atomics are lowered: another memory_order is a clear error at
# the attribute, and a multi-element region inside a T.Parallel loop is
# rejected (the scalar form is the per-iteration one).
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64,), "float32"), C: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        T.atomic_add(C[0:64], A, memory_order="seq_cst")
        for i in T.Parallel(4):
            T.atomic_add(C[i * 16:i * 16 + 16], A[0:16])

# CHECK: atomic_memory_order.py:11:{{[0-9]+}}: error: T.atomic_add with memory_order="seq_cst" is not lowered yet (only "relaxed")
# CHECK: atomic_memory_order.py:13:13: error: T.atomic_add of a 16-element region inside a T.Parallel loop is not lowered yet
