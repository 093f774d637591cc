# SIMT-level kernel (docs/simt-ir.md "wgmma"; issue 12, part W): one
# warpgroup computes C = A · Bᵀ (A: 64 x 64, B: n x 64, both K-contiguous in
# global memory) with four T.ptx_wgmma_ss m64nNk16 steps, the operands
# staged in shared memory in a chosen canonical layout:
#   a_mn / b_mn: 0 = K-major, 1 = MN-major; a_sw / b_sw: swizzle span in
#   bytes (0 = none, 32, 64, 128); n: 8..256; acc: "float32" or "float16";
#   dtype: "float16" or "bfloat16".
# One shared buffer S (the block's only one, so at offset 0 of the dynamic
# block, 1024-byte aligned): the A tile at byte 0, the B tile at byte 8192
# (room for n rounded up to 64 rows: an MN-major atom spans W/2 columns).
# Each thread writes elements of A and B with ordinary stores at
# phys(tile base + logical address) (docs/hopper.md's swizzle, keyed on the
# address bits), executes T.ptx_fence_proxy_async(), then T.sync_threads().
# Tile layouts, R rows (i: 64 for A, n for B), K = 64, byte addresses:
#   K-major,  W > 0: ((2k) // W) * R * W + i * W + (2k) % W      SBO = 8W, LBO 16 (unused)
#   K-major,  none:  (k // 8) * (R // 8) * 128 + (i // 8) * 128 + (i % 8) * 16 + 2 (k % 8)
#                                                                SBO = 128, LBO = (R // 8) * 128
#   MN-major, W > 0: (i // (W/2)) * 64 * W + k * W + 2 (i % (W/2))  SBO = 8W, LBO = 64W
#   MN-major, none:  (k // 8) * (R // 8) * 128 + (i // 8) * 128 + (k % 8) * 16 + 2 (i % 8)
#                                                                SBO = 128, LBO = (R // 8) * 128
# k-step s (k = 16s .. 16s + 15) starts at byte (32s // W) * R * W + 32s % W
# (K-major, W > 0), 16 s W (MN-major, W > 0) or 2 s LBO (no swizzle).
# The accumulators start at 1000 and the first step has scale_d 0 (D = A·B,
# the old value ignored), the other three scale_d 1 (D += A·B).  Each thread
# stores its n/2 accumulators through the map of docs/hopper.md "Accumulators".
# Used by test/unit/test_simt_wgmma.c (CPU executor) and test/GPU/test_wgmma.c.
import tilelang
import tilelang.language as T


@tilelang.jit
def wgmma_ss(a_mn=0, a_sw=128, b_mn=0, b_sw=128, n=256, acc="float32", dtype="float16"):
    K = 64
    a_m = a_sw // 16 - 1 if a_sw > 0 else 0
    b_m = b_sw // 16 - 1 if b_sw > 0 else 0
    B0 = 8192
    a_sbo = 8 * a_sw if a_sw > 0 else 128
    a_lbo = (64 * a_sw if a_mn == 1 else 16) if a_sw > 0 else 8 * 128
    b_sbo = 8 * b_sw if b_sw > 0 else 128
    b_lbo = (64 * b_sw if b_mn == 1 else 16) if b_sw > 0 else (n // 8) * 128

    @T.prim_func
    def main(A: T.Tensor((64, K), dtype), B: T.Tensor((n, K), dtype), C: T.Tensor((64, n), acc)):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((4096 + (n + 63) // 64 * 64 * K,), dtype)
            C_local = T.alloc_local((n // 2,), acc)
            tx = T.get_thread_binding(0)
            for e in T.serial(64 * K // 128):
                i = (e * 128 + T.get_thread_binding(0)) // K
                k = (e * 128 + T.get_thread_binding(0)) % K
                if a_sw > 0 and a_mn == 0:
                    a = (2 * k) // a_sw * 64 * a_sw + i * a_sw + (2 * k) % a_sw
                    S[(a ^ (((a >> 7) & a_m) << 4)) // 2] = A[i, k]
                elif a_sw > 0:
                    a = i // (a_sw // 2) * K * a_sw + k * a_sw + 2 * (i % (a_sw // 2))
                    S[(a ^ (((a >> 7) & a_m) << 4)) // 2] = A[i, k]
                elif a_mn == 0:
                    S[(k // 8 * 1024 + i // 8 * 128 + i % 8 * 16 + 2 * (k % 8)) // 2] = A[i, k]
                else:
                    S[(k // 8 * 1024 + i // 8 * 128 + k % 8 * 16 + 2 * (i % 8)) // 2] = A[i, k]
            for e in T.serial(n * K // 128):
                j = (e * 128 + T.get_thread_binding(0)) // K
                k = (e * 128 + T.get_thread_binding(0)) % K
                if b_sw > 0 and b_mn == 0:
                    b = B0 + (2 * k) // b_sw * n * b_sw + j * b_sw + (2 * k) % b_sw
                    S[(b ^ (((b >> 7) & b_m) << 4)) // 2] = B[j, k]
                elif b_sw > 0:
                    b = B0 + j // (b_sw // 2) * K * b_sw + k * b_sw + 2 * (j % (b_sw // 2))
                    S[(b ^ (((b >> 7) & b_m) << 4)) // 2] = B[j, k]
                elif b_mn == 0:
                    S[(B0 + k // 8 * (n // 8) * 128 + j // 8 * 128 + j % 8 * 16 + 2 * (k % 8)) // 2] = B[j, k]
                else:
                    S[(B0 + k // 8 * (n // 8) * 128 + j // 8 * 128 + k % 8 * 16 + 2 * (j % 8)) // 2] = B[j, k]
            T.ptx_fence_proxy_async()
            T.sync_threads()
            for r in T.unroll(n // 2):
                C_local[r] = T.Cast(acc, 1000)
            T.ptx_wgmma_fence()
            for s in T.unroll(4):
                if a_sw > 0 and a_mn == 0:
                    a_start = (32 * s) // a_sw * 64 * a_sw + (32 * s) % a_sw
                elif a_sw > 0:
                    a_start = 16 * s * a_sw
                else:
                    a_start = 2 * s * a_lbo
                if b_sw > 0 and b_mn == 0:
                    b_start = B0 + (32 * s) // b_sw * n * b_sw + (32 * s) % b_sw
                elif b_sw > 0:
                    b_start = B0 + 16 * s * b_sw
                else:
                    b_start = B0 + 2 * s * b_lbo
                T.ptx_wgmma_ss(C_local, 0, S, a_start // 2, a_sw, a_lbo, a_sbo, a_mn,
                               S, b_start // 2, b_sw, b_lbo, b_sbo, b_mn, n, T.min(s, 1))
            T.ptx_wgmma_commit()
            T.ptx_wgmma_wait(0, C_local, 0, n // 2)
            w = tx // 32
            g = tx % 32 // 4
            t = tx % 4
            for r in T.unroll(n // 2):
                C[16 * w + g + 8 * (r // 2 % 2), 8 * (r // 4) + 2 * t + r % 2] = C_local[r]

    return main
