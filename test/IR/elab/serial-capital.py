# T.Serial (TileLang's capitalised alias of T.serial, as examples/norm/rms_norm.py
# writes it) elaborates to the same serial loop as T.serial; used elsewhere
# than a for loop's iterator it is refused like T.serial.
# RUN: %tl-opt --kernel=row_sum %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=row_sum %s | FileCheck %s --check-prefix=EXEC
# RUN: not %tl-opt --kernel=misuse %s 2>&1 | FileCheck %s --check-prefix=ERR
# CHECK: for k in T.serial(4):
# CHECK-NEXT: for j in T.serial(8):
# CHECK: for k in T.serial(4):
# EXEC: output B shape=[32] dtype=float32
# EXEC: check: PASS
# ERR: serial-capital.py:41:13: error: T.Serial can only be used as the iterator of a for loop
import tilelang
import tilelang.language as T


@tilelang.jit
def row_sum(A, blk_k=8):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), "float32")
    B = T.empty((M,), "float32")
    with T.Kernel(M, threads=32) as bx:
        acc = T.alloc_local((1,), "float32")
        acc[0] = 0.0
        for k in T.Serial(T.ceildiv(N, blk_k)):
            for j in T.Serial(blk_k):
                acc[0] += A[bx, k * blk_k + j]
        for k in T.serial(T.ceildiv(N, blk_k)):
            acc[0] += A[bx, k * blk_k]
        B[bx] = acc[0]
    return B


kernel = row_sum.compile(M=32, N=32)


@tilelang.jit
def misuse(A):
    A: T.Tensor((8,), "float32")
    with T.Kernel(1, threads=32) as bx:
        r = T.Serial(8)
        A[0] = 0.0
