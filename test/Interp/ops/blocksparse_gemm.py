# REQUIRES: tl-run
# The block-sparse GEMM of TileLang's blocksparse_gemm/example_blocksparse_gemm.py (the loop body one
# `if BlockMask[by, bx, k]:` around the two tile copies and the T.gemm; C cleared before the loop, staged
# through C_shared after it, T.use_swizzle(10)) at 128 x 128 x 256 in 64 x 64 x 32 tiles: 2 x 2 output tiles of
# 8 k-tiles each.  The mask (mask.npy, BlockMask[by, bx, k] = bit k of
# [0x00, 0xFF, 0xCD, 0x62][2 * by + bx]): tile (0, 0) takes no
# iteration (C stays the cleared zeros), tile (0, 1) all 8, tile (1, 0) k = 0, 2, 3, 6, 7 and tile (1, 1)
# k = 1, 5, 6 -- so that consecutive taken iterations wrap around the stage ring of 2 and of 3 stages
# at k-tiles that are not consecutive (the ring's position is the count of taken iterations, not k).  On sm_90a
# the loop takes the Hopper path (TMA producer warpgroup, wgmma consumers; warp_specialize.c, ws_cond.c); run
# by the CPU SIMT executor against the reference evaluator (its race and deadlock checks on), with 2 and 3
# stages, two schedule seeds, one tile a block and a persistent grid of 2 and of 1 blocks (--sms: the
# taken-iteration count runs on across a block's two tiles, and across all four, 16 taken, on one block; with
# tl.enable_stream_k too, which it declines), and on sm_80 (cp.async + mma.sync).  C of tile (0, 0) is checked
# to be exactly zero (both paths).
# RUN: rm -rf %t && mkdir -p %t
# RUN: python3 %S/../../IR/tl-run/Inputs/npy_tool.py write %t/mask.npy '|b1' 2,2,8 '([0x00, 0xFF, 0xCD, 0x62][i // 8] >> (i %% 8)) & 1 == 1'
# RUN: %tl-run --device=cpu --check --target=sm_90a --remarks --input BlockMask=%t/mask.npy %s 2>&1 | FileCheck %s --check-prefix=HOPPER
# RUN: %tl-run --device=cpu --check --target=sm_90a --schedule-seed=7 --input BlockMask=%t/mask.npy %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --target=sm_90a --input BlockMask=%t/mask.npy -D num_stages=3 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --target=sm_90a --schedule-seed=7 --input BlockMask=%t/mask.npy -D num_stages=3 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --target=sm_90a --remarks --sms=2 --input BlockMask=%t/mask.npy %s 2>&1 | FileCheck %s --check-prefix=PERSIST
# RUN: %tl-run --device=cpu --check --target=sm_90a --sms=2 --input BlockMask=%t/mask.npy -D num_stages=3 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --target=sm_90a --sms=1 --schedule-seed=3 --input BlockMask=%t/mask.npy -D num_stages=3 --save %t/h %s | FileCheck %s
# RUN: python3 %S/../../IR/tl-run/Inputs/npy_tool.py dump %t/h/C.npy | python3 -c "import sys; v = [float(x) for x in sys.stdin.read().split()[-16384:]]; print('zeros', sum(v[r * 128 + c] == 0 for r in range(64) for c in range(64)))" | FileCheck %s --check-prefix=ZERO
# RUN: %tl-run --device=cpu --check --target=sm_90a --sms=1 --input BlockMask=%t/mask.npy -D enable_rasterization=False %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --target=sm_90a --remarks --sms=3 --pass-config=tl.enable_stream_k --input BlockMask=%t/mask.npy %s 2>&1 | FileCheck %s --check-prefix=PERSIST
# RUN: %tl-run --device=cpu --check --input BlockMask=%t/mask.npy --save %t/o %s 2>&1 | FileCheck %s
# RUN: python3 %S/../../IR/tl-run/Inputs/npy_tool.py dump %t/o/C.npy | python3 -c "import sys; v = [float(x) for x in sys.stdin.read().split()[-16384:]]; print('zeros', sum(v[r * 128 + c] == 0 for r in range(64) for c in range(64)))" | FileCheck %s --check-prefix=ZERO
# CHECK: check: PASS
# HOPPER: blocksparse_gemm.py:[[#@LINE+26]]:{{[0-9]+}}: remark: T.Pipelined GEMM loop takes the Hopper path: 2-stage TMA pipeline on mbarriers, a producer warpgroup, T.gemm as wgmma over 1 consumer warpgroups, a persistent grid of min(tiles, SMs) blocks{{.*}}; no stream-K: the loop body is conditional
# HOPPER: check: PASS
# PERSIST: remark: T.Pipelined GEMM loop takes the Hopper path{{.*}}; no stream-K: the loop body is conditional
# PERSIST: check: PASS
# ZERO: zeros 4096
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def blocksparse_matmul(M=128, N=128, K=256, block_M=64, block_N=64, block_K=32, num_stages=2, thread_num=128,
                       enable_rasterization=True, dtype="float16", accum_dtype="float32"):
    block_mask_shape = (M // block_M, N // block_N, K // block_K)

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), BlockMask: T.Tensor(block_mask_shape, "bool"),
             C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=thread_num) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            C_shared = T.alloc_shared((block_M, block_N), dtype)

            T.use_swizzle(panel_size=10, enable=enable_rasterization)
            T.clear(C_local)

            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                if BlockMask[by, bx, k]:
                    T.copy(A[by * block_M, k * block_K], A_shared)
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                    T.gemm(A_shared, B_shared, C_local)

            T.copy(C_local, C_shared)
            T.copy(C_shared, C[by * block_M, bx * block_N])

    return main
