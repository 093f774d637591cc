# SIMT-level kernel (docs/simt-ir.md, already lowered: no tile ops) for the
# warp-level intrinsics: one warp copies a 16x16 A tile and a 16x8 B tile to
# shared memory with cp.async, waits, loads the mma fragments with ldmatrix
# (A: x4, B: x2.trans from K-major storage) and runs one mma.sync m16n8k16;
# D = A @ B + Cin, stored from the accumulator fragment layout
# (docs/layouts.md).  in_dtype float16 or bfloat16; acc_dtype
# float32 (or float16 with float16 inputs); copy_bytes 16, 8 or 4 (the
# size of A's cp.async pieces); B rows >= b_rows are zero-filled by
# cp.async with a false predicate (src-size 0).  Used by test/GPU/test_mma_intrin.c
# and test/unit/test_nvptx_mma.c.
import tilelang.language as T

in_dtype = "float16"
acc_dtype = "float32"
copy_bytes = 16
b_rows = 16


@T.prim_func
def main(A: T.Tensor((16, 16), in_dtype), B: T.Tensor((16, 8), in_dtype), Cin: T.Tensor((16, 8), acc_dtype),
         D: T.Tensor((16, 8), acc_dtype)):
    with T.Kernel(1, threads=32) as bx:
        As = T.alloc_shared((256,), in_dtype)
        Bs = T.alloc_shared((128,), in_dtype)
        a = T.alloc_local((8,), in_dtype)
        b = T.alloc_local((4,), in_dtype)
        c = T.alloc_local((4,), acc_dtype)
        tx = T.get_thread_binding(0)
        for q in T.unroll(16 // copy_bytes):
            T.ptx_cp_async(As, tx * 8 + q * (copy_bytes // 2), A, tx * 8 + q * (copy_bytes // 2), copy_bytes, True)
        if tx < 16:
            T.ptx_cp_async(Bs, tx * 8, B, tx * 8, 16, tx < b_rows)
        T.ptx_commit_group()
        T.ptx_wait_group(0)
        T.sync_threads()
        g = tx // 4
        t = tx % 4
        c[0] = Cin[g, t * 2]
        c[1] = Cin[g, t * 2 + 1]
        c[2] = Cin[g + 8, t * 2]
        c[3] = Cin[g + 8, t * 2 + 1]
        T.ptx_ldmatrix(a, 0, As, tx % 16 * 16 + tx // 16 * 8, 4, False)
        T.ptx_ldmatrix(b, 0, Bs, tx % 16 * 8, 2, True)
        T.ptx_mma(a, 0, b, 0, c, 0, "m16n8k16")
        D[g, t * 2] = c[0]
        D[g, t * 2 + 1] = c[1]
        D[g + 8, t * 2] = c[2]
        D[g + 8, t * 2 + 1] = c[3]
