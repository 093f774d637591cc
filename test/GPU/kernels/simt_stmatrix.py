# SIMT-level kernel (docs/simt-ir.md, already lowered) for T.ptx_stmatrix
# (sm_90): one warp; lane l holds r[i] = 8*l + i (exact in float16) in a
# local buffer of 8, clears a 4 x 8 x 8 shared tile, stores `num` 8x8
# matrices with stmatrix (lane l addresses row l % 8 of matrix l // 8,
# `trans` as given), and copies the whole tile to Out.  Expected, for matrix
# i < num, row r, column c: 8*(4r + c//2) + 2i + c%2, or with trans
# 8*(4c + r//2) + 2i + r%2 (PTX ISA §9.7.14.5.16); 0 for matrices >= num.
# Used by test/unit/test_cpu_device.c (CPU executor) and
# test/GPU/test_mma_intrin.c (the GPU, sm_90).
import tilelang.language as T

num = 4
trans = False


@T.prim_func
def main(Out: T.Tensor((256,), "float16")):
    with T.Kernel(1, threads=32) as bx:
        S = T.alloc_shared((256,), "float16")
        r = T.alloc_local((8,), "float16")
        tx = T.get_thread_binding(0)
        for i in T.unroll(8):
            S[tx * 8 + i] = T.float16(0)
            r[i] = T.Cast("float16", tx * 8 + i)
        T.sync_threads()
        T.ptx_stmatrix(S, tx // 8 * 64 + tx % 8 * 8, r, 0, num, trans)
        T.sync_threads()
        for i in T.unroll(8):
            Out[tx * 8 + i] = S[tx * 8 + i]
