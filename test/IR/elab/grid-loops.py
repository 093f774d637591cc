# T.grid(e0, e1, ...) binds one loop variable per extent and elaborates to
# nested T.serial loops, outermost first; a count mismatch is refused.
# RUN: %tl-opt --kernel=scale_rows %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=scale_rows %s | FileCheck %s --check-prefix=EXEC
# RUN: not %tl-opt --kernel=mismatch %s 2>&1 | FileCheck %s --check-prefix=ERR
# CHECK: for j in T.serial(3):
# CHECK-NEXT: for k in T.serial(4):
# CHECK-NEXT: B[bx * 32 + tx, j * 4 + k] = A[bx * 32 + tx, j * 4 + k] * 2.0 + T.Cast("float32", k)
# CHECK: for r in T.serial(2):
# CHECK-NEXT: for s in T.serial(3):
# CHECK-NEXT: for t in T.serial(4):
# EXEC: output B shape=[64,12] dtype=float32
# EXEC: check: PASS
# ERR: grid-loops.py:44:13: error: T.grid has 2 extents but 3 loop variables
import tilelang
import tilelang.language as T


@tilelang.jit
def scale_rows(A):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), "float32")
    B = T.empty((M, N), "float32")
    C = T.empty((M,), "float32")
    with T.Kernel(T.ceildiv(M, 32), threads=32) as bx:
        tx = T.get_thread_binding(0)
        acc = T.alloc_local((1,), "float32")
        acc[0] = 0.0
        for j, k in T.grid(N // 4, 4):
            B[bx * 32 + tx, j * 4 + k] = A[bx * 32 + tx, j * 4 + k] * 2.0 + k
        for r, s, t in T.grid(2, 3, 4):
            acc[0] += A[bx * 32 + tx, s * 4 + t] * (r + 1)
        C[bx * 32 + tx] = acc[0]
    return B, C


kernel = scale_rows.compile(M=64, N=12)


@tilelang.jit
def mismatch(A):
    A: T.Tensor((8, 8), "float32")
    with T.Kernel(1, threads=32) as bx:
        for i, j, k in T.grid(8, 8):
            A[i, j] = 0.0
