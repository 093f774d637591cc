# SIMT-level kernel (docs/simt-ir.md "Asynchronous pipelines"; issue 11,
# acceptance 2): B[i] = A[i] * 2 + 1 over 8192 floats with a named barrier
# over two warps while the other two run on.  8 blocks of 128 threads, 1024
# floats per block.
#  - Warps 0 and 1 handle floats 0..511 of the block in two rounds of 256:
#    warp w copies its 128 floats of the round from A to S[w * 128 ..], then
#    `bar.sync 1, 64` (the two warps only), then computes the OTHER warp's
#    128 results from S; a second `bar.sync 1, 64` keeps the next round's
#    copy from overwriting S before the other warp has read it.
#  - Warps 2 and 3 compute floats 512..1023 straight from global memory and
#    never touch barrier 1 (bar.sync 1, 64 must not wait for them).
# Conditions on the thread index call T.get_thread_binding(0) directly, so
# that the barrier pass sees them as per-thread and leaves the branches alone.
# Used by test/unit/test_simt_sched.c (CPU executor) and the GPU test of
# issue 11.
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((8192,), "float32"), B: T.Tensor((8192,), "float32")):
    with T.Kernel(8, threads=128) as bx:
        S = T.alloc_shared((256,), "float32")
        tx = T.get_thread_binding(0)
        warp = tx // 32
        lane = tx % 32
        if T.get_thread_binding(0) < 64:
            for r in T.serial(2):
                for j in T.unroll(4):
                    S[warp * 128 + j * 32 + lane] = A[bx * 1024 + r * 256 + warp * 128 + j * 32 + lane]
                T.ptx_bar_sync(1, 64)
                for j in T.unroll(4):
                    B[bx * 1024 + r * 256 + (1 - warp) * 128 + j * 32 + lane] = S[(1 - warp) * 128 + j * 32 + lane] * T.float32(2) + T.float32(1)
                T.ptx_bar_sync(1, 64)
        else:
            for j in T.unroll(8):
                B[bx * 1024 + 512 + (warp - 2) * 256 + j * 32 + lane] = A[bx * 1024 + 512 + (warp - 2) * 256 + j * 32 + lane] * T.float32(2) + T.float32(1)
