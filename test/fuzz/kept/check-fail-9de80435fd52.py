# RUN: %tl-opt --emit=simt %s | FileCheck %s
# RUN: %tl-run --device=cpu --check %s | FileCheck %s --check-prefix=EXEC
# RUN: %tl-run --device=cpu --check -D TH=256 -D M=128 -D N=128 %s | FileCheck %s --check-prefix=EXEC
# T.copy between two fragments whose layouts differ: c1 is the accumulator of
# a T.gemm split over 2x2 warps (Square), c2 of one split over 4x1 (FullRow),
# so no thread holds the same elements of both.  The copy goes through a
# shared scratch tile: barrier, every thread stores its c1 registers, barrier,
# every thread loads its c2 registers.  In a loop, so the leading barrier
# keeps the next iteration's stores after this one's loads.
import tilelang.language as T

M = 64
N = 64
K = 32
TH = 128


@T.prim_func
def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
    with T.Kernel(1, threads=TH) as bx:
        A_s = T.alloc_shared((M, K), "float16")
        B_s = T.alloc_shared((K, N), "float16")
        c1 = T.alloc_fragment((M, N), "float32")
        c2 = T.alloc_fragment((M, N), "float32")
        T.copy(A, A_s)
        T.copy(B, B_s)
        for it in T.serial(2):
            T.gemm(A_s, B_s, c1, clear_accum=True)
            for i, j in T.Parallel(M, N):
                c1[i, j] = c1[i, j] * 0.5 + 1.0
            T.gemm(A_s, B_s, c2, policy=T.GemmWarpPolicy.FullRow)
        T.copy(c2, C)

# CHECK: relayout = T.alloc_shared((4096,), "float32")
# CHECK-NEXT: T.sync_threads()
# CHECK-NEXT: for rr in T.unroll(32):
# CHECK-NEXT: relayout[{{.*}}] = c1[rr]
# CHECK-NEXT: T.sync_threads()
# CHECK-NEXT: for rr_1 in T.unroll(32):
# CHECK-NEXT: c2[rr_1] = relayout[

# EXEC: output C shape=[{{[0-9]+}},{{[0-9]+}}] dtype=float32
# EXEC-NEXT: check: PASS
