# SIMT-level GEMM written by hand (docs/simt-ir.md: no tile ops), the shape
# the GEMM lowering produces for examples/gemm.py with 128x128x32 tiles, 128
# threads (4 warps of 64x64) and a 2-stage cp.async pipeline, without
# swizzle: C = A @ B, A (M, K) and B (K, N) row-major, f32 accumulation.
# Checks code generation of ldmatrix / mma / cp.async at scale, with the
# per-thread fragments (128 f32 accumulators, 32 A and 32 B halves) indexed
# by constants after unrolling so that they live in registers (`ptxas -v`:
# no stack frame, no spills).  M, N multiples of 128, K a multiple of 32.
# Used by test/GPU/test_mma_intrin.c and test/unit/test_nvptx_mma.c.
import tilelang.language as T

M = 256
N = 256
K = 256
dtype = "float16"


@T.prim_func
def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
    with T.Kernel(N // 128, M // 128, threads=128) as (bx, by):
        As = T.alloc_shared((8192,), dtype)
        Bs = T.alloc_shared((8192,), dtype)
        acc = T.alloc_local((128,), "float32")
        af = T.alloc_local((32,), dtype)
        bf = T.alloc_local((32,), dtype)
        tx = T.get_thread_binding(0)
        lane = tx % 32
        wm = tx // 64
        wn = tx // 32 % 2
        for i in T.unroll(128):
            acc[i] = 0.0
        for q in T.unroll(4):
            T.ptx_cp_async(As, (tx + q * 128) // 4 * 32 + (tx + q * 128) % 4 * 8, A, (by * 128 + (tx + q * 128) // 4) * K + (tx + q * 128) % 4 * 8, 16, True)
            T.ptx_cp_async(Bs, (tx + q * 128) // 16 * 128 + (tx + q * 128) % 16 * 8, B, (tx + q * 128) // 16 * N + bx * 128 + (tx + q * 128) % 16 * 8, 16, True)
        T.ptx_commit_group()
        for ko in T.serial(K // 32):
            if ko + 1 < K // 32:
                for q in T.unroll(4):
                    T.ptx_cp_async(As, (ko + 1) % 2 * 4096 + (tx + q * 128) // 4 * 32 + (tx + q * 128) % 4 * 8, A, (by * 128 + (tx + q * 128) // 4) * K + (ko + 1) * 32 + (tx + q * 128) % 4 * 8, 16, True)
                    T.ptx_cp_async(Bs, (ko + 1) % 2 * 4096 + (tx + q * 128) // 16 * 128 + (tx + q * 128) % 16 * 8, B, ((ko + 1) * 32 + (tx + q * 128) // 16) * N + bx * 128 + (tx + q * 128) % 16 * 8, 16, True)
            T.ptx_commit_group()
            T.ptx_wait_group(1)
            T.sync_threads()
            for kk in T.unroll(2):
                for i in T.unroll(4):
                    T.ptx_ldmatrix(af, i * 8, As, ko % 2 * 4096 + (wm * 64 + i * 16 + lane % 16) * 32 + kk * 16 + lane // 16 * 8, 4, False)
                for j in T.unroll(4):
                    T.ptx_ldmatrix(bf, j * 8, Bs, ko % 2 * 4096 + (kk * 16 + lane % 16) * 128 + wn * 64 + j * 16 + lane // 16 * 8, 4, True)
                for i in T.unroll(4):
                    for j in T.unroll(8):
                        T.ptx_mma(af, i * 8, bf, j * 4, acc, (i * 8 + j) * 4, "m16n8k16")
            T.sync_threads()
        for i in T.unroll(4):
            for j in T.unroll(8):
                C[by * 128 + wm * 64 + i * 16 + lane // 4, bx * 128 + wn * 64 + j * 8 + lane % 4 * 2] = T.Cast(dtype, acc[(i * 8 + j) * 4])
                C[by * 128 + wm * 64 + i * 16 + lane // 4, bx * 128 + wn * 64 + j * 8 + lane % 4 * 2 + 1] = T.Cast(dtype, acc[(i * 8 + j) * 4 + 1])
                C[by * 128 + wm * 64 + i * 16 + lane // 4 + 8, bx * 128 + wn * 64 + j * 8 + lane % 4 * 2] = T.Cast(dtype, acc[(i * 8 + j) * 4 + 2])
                C[by * 128 + wm * 64 + i * 16 + lane // 4 + 8, bx * 128 + wn * 64 + j * 8 + lane % 4 * 2 + 1] = T.Cast(dtype, acc[(i * 8 + j) * 4 + 3])
