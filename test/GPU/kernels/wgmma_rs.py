# SIMT-level kernel (docs/simt-ir.md "wgmma"; issue 12, part W): two
# warpgroups, each computing 64 rows of C = A · Bᵀ (A: 128 x 64, B: n x 64,
# K-contiguous) with four T.ptx_wgmma_rs m64nNk16 steps: A from registers,
# B staged in shared memory (one buffer S at offset 0 of the dynamic block)
# in a chosen canonical layout, exactly as test/GPU/kernels/wgmma_ss.py
# stages its B operand (b_mn: 0 K-major, 1 MN-major; b_sw: 0, 32, 64, 128).
# Thread T's A fragment for k-step s is A_frag[8s .. 8s + 8) = a0.lo .. a3.hi
# of the mma.sync m16n8k16 A map over its warp's 16 rows (warp q of
# warpgroup G: rows 64G + 16q .. +15; g = lane / 4, t = lane % 4; element r
# is A(row 64G + 16q + g + 8((r // 2) % 2), k 16s + 2t + r % 2 + 8(r // 4))),
# loaded from global memory.  The accumulators start at 1000; the first step
# has scale_d 0.  Used by test/unit/test_simt_wgmma.c and test/GPU/test_wgmma.c.
import tilelang
import tilelang.language as T


@tilelang.jit
def wgmma_rs(b_mn=0, b_sw=128, n=64, acc="float32", dtype="float16"):
    K = 64
    b_m = b_sw // 16 - 1 if b_sw > 0 else 0
    b_sbo = 8 * b_sw if b_sw > 0 else 128
    b_lbo = (64 * b_sw if b_mn == 1 else 16) if b_sw > 0 else (n // 8) * 128

    @T.prim_func
    def main(A: T.Tensor((128, K), dtype), B: T.Tensor((n, K), dtype), C: T.Tensor((128, n), acc)):
        with T.Kernel(1, threads=256) as bx:
            S = T.alloc_shared(((n + 63) // 64 * 64 * K,), dtype)
            A_frag = T.alloc_local((32,), dtype)
            C_local = T.alloc_local((n // 2,), acc)
            tx = T.get_thread_binding(0)
            wg = tx // 128
            w = tx % 128 // 32
            g = tx % 32 // 4
            t = tx % 4
            for e in T.serial(n * K // 256):
                j = (e * 256 + T.get_thread_binding(0)) // K
                k = (e * 256 + T.get_thread_binding(0)) % K
                if b_sw > 0 and b_mn == 0:
                    b = (2 * k) // b_sw * n * b_sw + j * b_sw + (2 * k) % b_sw
                    S[(b ^ (((b >> 7) & b_m) << 4)) // 2] = B[j, k]
                elif b_sw > 0:
                    b = j // (b_sw // 2) * K * b_sw + k * b_sw + 2 * (j % (b_sw // 2))
                    S[(b ^ (((b >> 7) & b_m) << 4)) // 2] = B[j, k]
                elif b_mn == 0:
                    S[(k // 8 * (n // 8) * 128 + j // 8 * 128 + j % 8 * 16 + 2 * (k % 8)) // 2] = B[j, k]
                else:
                    S[(k // 8 * (n // 8) * 128 + j // 8 * 128 + k % 8 * 16 + 2 * (j % 8)) // 2] = B[j, k]
            for s in T.unroll(4):
                for r in T.unroll(8):
                    A_frag[s * 8 + r] = A[64 * wg + 16 * w + g + 8 * (r // 2 % 2), 16 * s + 2 * t + r % 2 + 8 * (r // 4)]
            T.ptx_fence_proxy_async()
            T.sync_threads()
            for r in T.unroll(n // 2):
                C_local[r] = T.Cast(acc, 1000)
            T.ptx_wgmma_fence()
            for s in T.unroll(4):
                if b_sw > 0 and b_mn == 0:
                    b_start = (32 * s) // b_sw * n * b_sw + (32 * s) % b_sw
                elif b_sw > 0:
                    b_start = 16 * s * b_sw
                else:
                    b_start = 2 * s * b_lbo
                T.ptx_wgmma_rs(C_local, 0, A_frag, s * 8, S, b_start // 2, b_sw, b_lbo, b_sbo, b_mn, n, T.min(s, 1))
            T.ptx_wgmma_commit()
            T.ptx_wgmma_wait(0, C_local, 0, n // 2)
            for r in T.unroll(n // 2):
                C[64 * wg + 16 * w + g + 8 * (r // 2 % 2), 8 * (r // 4) + 2 * t + r % 2] = C_local[r]

    return main
