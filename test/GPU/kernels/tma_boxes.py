# SIMT-level kernel (docs/simt-ir.md "TMA tensor copies"; issue 12, part T):
# three TMA tensor loads per block onto one mbarrier, and the raw shared
# images (physical bytes, nothing un-swizzled) copied out to global memory,
# so that a test compares the GPU's TMA images with the CPU executor's bit
# for bit (test/GPU/test_tma.c (GPU); test/unit/test_tma_cpu.c (unit)).  16 blocks of 160 threads: thread 0
# initialises the mbarrier, then issues expect_tx(6528) and the three copies;
# warps 1-4 (128 threads) wait for phase 0 and copy the images.
#  - A float16 [100, 200] (rows of 400 bytes: not a multiple of the box):
#    box (32, 64), swizzle 128 (4096 bytes) at origin (t // 4 * 32 - 4,
#    t % 4 * 64 - 8): boxes over the top/left edge (negative coordinates)
#    and past the bottom/right edge (zero fill); and box (8, 24), no swizzle
#    (384 bytes, inner 48 bytes) at (t * 7 - 3, t * 16 - 24): a second map
#    over the same tensor.
#  - B bfloat16 [3, 50, 40]: box (2, 16, 32), swizzle 64 (2048 bytes) at
#    (t % 3 - 1, t // 4 * 16 - 3, t % 4 * 16 - 8).
# Innermost coordinates are multiples of 16 bytes: other offsets fault on the
# H200 (illegal instruction; docs/simt-ir.md "TMA tensor copies").
# Shared layout (smem-plan in order): A_s at 0 (1024-aligned), B_s at 4096
# (1024-aligned), C_s at 6144 (128-aligned), bars after.
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((100, 200), "float16"), B: T.Tensor((3, 50, 40), "bfloat16"),
         OA: T.Tensor((16, 2048), "float16"), OB: T.Tensor((16, 1024), "bfloat16"),
         OC: T.Tensor((16, 192), "float16")):
    with T.Kernel(16, threads=160) as t:
        A_s = T.alloc_shared((2048,), "float16")
        B_s = T.alloc_shared((1024,), "bfloat16")
        C_s = T.alloc_shared((192,), "float16")
        bars = T.alloc_shared((1,), "uint64")
        if T.get_thread_binding(0) == 0:
            T.ptx_mbarrier_init(bars, 0, 1)
            T.ptx_fence_proxy_async()
        T.sync_threads()
        if T.get_thread_binding(0) == 0:
            T.ptx_mbarrier_arrive_expect_tx(bars, 0, 6528)
            T.ptx_tma_load(A_s, 0, bars, 0, A, 128, 32, 64, t // 4 * 32 - 4, t % 4 * 64 - 8)
            T.ptx_tma_load(B_s, 0, bars, 0, B, 64, 2, 16, 32, t % 3 - 1, t // 4 * 16 - 3, t % 4 * 16 - 8)
            T.ptx_tma_load(C_s, 0, bars, 0, A, 0, 8, 24, t * 7 - 3, t * 16 - 24)
        if T.get_thread_binding(0) >= 32:
            c = T.get_thread_binding(0) - 32
            T.ptx_mbarrier_wait(bars, 0, 0)
            for j in T.serial(16):
                OA[t, j * 128 + c] = A_s[j * 128 + c]
            for j in T.serial(8):
                OB[t, j * 128 + c] = B_s[j * 128 + c]
            OC[t, c] = C_s[c]
            if c < 64:
                OC[t, 128 + c] = C_s[128 + c]
