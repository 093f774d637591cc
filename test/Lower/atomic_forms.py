# REQUIRES: tl-run
# RUN: %tl-opt --emit=simt %s | FileCheck %s
# RUN: %tl-run --device=cpu --check %s | FileCheck %s --check-prefix=CPU
# The forms of T.atomic_add (lib/Lower/lower_atomic.c, docs/simt-ir.md
# "Atomics"): a shared tile added into a partial global tile (rows beyond 37
# skipped, the f16 values converted to the f32 destination first), the scalar
# form inside a T.Parallel loop (one atomic per iteration), and a scalar form
# outside any loop (once per block: thread 0).  The CPU executor's result
# matches the reference evaluator.
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((37, 16), "float16"), C: T.Tensor((37, 16), "float32"), S: T.Tensor((4,), "float32")):
    with T.Kernel(3, threads=64) as bx:
        A_s = T.alloc_shared((16, 16), "float16")
        T.copy(A[bx * 16, 0], A_s)
        T.atomic_add(C[bx * 16:bx * 16 + 16, 0:16], A_s)
        for i, j in T.Parallel(4, 16):
            T.atomic_add(C[bx * 4 + i, j], T.Cast("float32", A_s[i, j]) * 2.0)
        T.atomic_add(S[bx], 1.0)

# CHECK: T.sync_threads()
# CHECK: if bx * 16 + {{.*}} < 37:
# CHECK-NEXT: T.ptx_atomic_add(C, (bx * 16 + {{.*}}) * 16 + {{.*}}, T.Cast("float32", A_s[{{.*}}]), False)
# CHECK: T.ptx_atomic_add(C, (bx * 4 + {{.*}}) * 16 + {{.*}}, T.Cast("float32", A_s[{{.*}}]) * 2.0, False)
# CHECK: if T.get_thread_binding(0) < 1:
# CHECK-NEXT: T.ptx_atomic_add(S, bx, 1.0, False)

# CPU: check: PASS
