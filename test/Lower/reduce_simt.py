# RUN: %tl-opt --emit=simt %s | FileCheck %s
# Row statistics of an mma accumulator (docs/layouts.md "Row statistics"): a FullRow
# gemm over 4 warps gives each thread WM/8 = 4 statistics (rows g, g+8,
# g+16, g+24 of its warp); the row max combines the thread's 16 registers
# of each row, then the quad (shfl_xor 2, 1), never shared memory; the
# statistic is then read beside the accumulator in register 2*mi + h.
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128, 32), "float16"), B: T.Tensor((64, 32), "float16"), C: T.Tensor((128, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((128, 32), "float16")
        B_s = T.alloc_shared((64, 32), "float16")
        acc = T.alloc_fragment((128, 64), "float32")
        m = T.alloc_fragment((128,), "float32")
        T.copy(A, A_s)
        T.copy(B, B_s)
        T.gemm(A_s, B_s, acc, transpose_B=True, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)
        T.reduce_max(acc, m, dim=1)
        for i, j in T.Parallel(128, 64):
            acc[i, j] = acc[i, j] - m[i]
        T.copy(acc, C)

# CHECK: m = T.alloc_local((4,), "float32")
# CHECK: red_acc = T.alloc_local((4,), "float32")
# CHECK: red_acc[rk] = -T.infinity("float32")
# CHECK: red_acc[mi{{[_0-9]*}} * 2 + h{{[_0-9]*}}] = T.max(red_acc[mi{{[_0-9]*}} * 2 + h{{[_0-9]*}}], acc[
# CHECK: T.shfl_xor(red_acc[rk_1], 2, 32)
# CHECK: T.shfl_xor(red_acc[rk_1], 1, 32)
# CHECK-NOT: red_ws
# CHECK-NOT: T.sync_threads()
# CHECK: m[rk_2] = red_acc[rk_2]
# CHECK: - m[mi{{[_0-9]*}} * 2 + h{{[_0-9]*}}]
