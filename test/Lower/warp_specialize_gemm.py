# RUN: %tl-opt --target=sm_90a --emit=simt --remarks --sms=8 -D block_M=128 -D block_N=256 -D block_K=64 -D threads=256 -D M=1024 -D N=512 -D K=512 %examples/gemm.py 2>%t.err > %t.simt
# RUN: FileCheck %s --check-prefix=SIMT < %t.simt
# RUN: FileCheck %s --check-prefix=REMARK < %t.err
# RUN: %tl-opt --target=sm_90a --emit=simt --remarks --sms=64 %examples/gemm.py 2>&1 | FileCheck %s --check-prefix=DEFAULT
# RUN: %tl-opt --target=sm_90a --emit=simt --remarks -D block_M=32 %examples/gemm.py 2>&1 >/dev/null | FileCheck %s --check-prefix=SMALLM
# RUN: %tl-opt --target=sm_90a --emit=simt --remarks -D block_N=256 %examples/gemm.py 2>&1 >/dev/null | FileCheck %s --check-prefix=BIGACC
# RUN: %tl-opt --target=sm_90a --emit=simt --sms=8 -D block_M=128 -D block_N=256 -D block_K=64 -D threads=256 -D M=512 -D N=512 -D K=512 %examples/gemm.py 2>/dev/null | FileCheck %s --check-prefix=ONETILE
# RUN: %tl-opt --target=sm_90a --emit=simt --remarks --sms=8 -D block_M=128 -D block_N=256 -D block_K=64 -D threads=256 -D M=512 -D N=512 -D K=512 %examples/gemm.py 2>&1 >/dev/null | FileCheck %s --check-prefix=ONETILEREMARK
# RUN: %tl-opt --target=sm_80 --emit=simt --remarks -D block_M=128 -D block_N=256 -D block_K=64 -D threads=256 %examples/gemm.py 2>&1 >/dev/null | FileCheck %s --check-prefix=SM80
# The warp-specialize pass (lib/Lower/Hopper/warp_specialize.c) on examples/gemm.py at
# 128x256x64 with 256 threads on sm_90a: a producer warpgroup (threads 256..383)
# whose thread 256 issues the TMA loads (A: one 128x64 box, B: four 64x64
# panels of the 128-byte swizzle) on a 3-stage mbarrier ring; the consumers
# wait on full[s], run the T.gemm as wgmma m64n256k16 (A K-major, B N-major:
# LBO 64 rows * 128 B), and each warp arrives on empty[s].  --sms=8 (and
# --sms=64 below) make the tiles fill whole waves, so that the plain persistent
# grid is shown (on 132 SMs both shapes take stream-K: test/NVPTX/stream-k.test).

# SIMT: with T.Kernel(8, threads=384) as ws_block:
# SIMT: ws_mbar = T.alloc_shared((6,), "uint64")
# SIMT: T.ptx_mbarrier_init(ws_mbar, 0, 1)
# SIMT-NEXT: T.ptx_mbarrier_init(ws_mbar, 3, 8)
# SIMT: T.sync_threads()
# SIMT: if T.get_thread_binding(0) >= 256:
# SIMT-NEXT: T.ptx_setmaxnreg(40, False)
# SIMT-NEXT: if T.get_thread_binding(0) == 256:
# A persistent grid: min(tiles, 132) blocks, each walking tiles ws_block + 8j,
# in the default rasterization (no T.use_swizzle: panels of 10 grid rows).
# SIMT-NEXT: for ws_tile_p in T.serial(T.ceildiv(16 - ws_block, 8)):
# SIMT-NEXT: rz_block = ws_block + ws_tile_p * 8
# SIMT-NEXT: rz_panel = rz_block // 20
# SIMT-NEXT: rz_offset = rz_block % 20
# SIMT-NEXT: rz_stride = T.if_then_else(rz_panel + 1 < 1, 10, 8 - rz_panel * 10)
# SIMT-NEXT: bx_p = T.if_then_else(rz_panel % 2 == 1, 1 - rz_offset // rz_stride, rz_offset // rz_stride)
# SIMT-NEXT: by_p = rz_offset % rz_stride + rz_panel * 10
# SIMT-NEXT: for kp in T.serial(8):
# SIMT-NEXT: ws_r = ws_tile_p * 8 + kp
# SIMT-NEXT: T.ptx_mbarrier_wait(ws_mbar, ws_r % 3 + 3, (ws_r // 3 + 1) % 2)
# SIMT-NEXT: T.ptx_mbarrier_arrive_expect_tx(ws_mbar, ws_r % 3, 49152)
# SIMT-NEXT: T.ptx_tma_load(A_shared, ws_r % 3 * 8192, ws_mbar, ws_r % 3, A, 128, 128, 64, by_p * 128, kp * 64)
# SIMT-NEXT: T.ptx_tma_load(B_shared, ws_r % 3 * 16384, ws_mbar, ws_r % 3, B, 128, 64, 64, kp * 64, bx_p * 256)
# SIMT-COUNT-3: T.ptx_tma_load(B_shared,
# SIMT: else:
# SIMT-NEXT: T.ptx_setmaxnreg(232, True)
# SIMT-NEXT: for ws_tile in T.serial(T.ceildiv(16 - ws_block, 8)):
# SIMT: bx = T.if_then_else(rz_panel_1 % 2 == 1, 1 - rz_offset_1 // rz_stride_1, rz_offset_1 // rz_stride_1)
# SIMT-NEXT: by = rz_offset_1 % rz_stride_1 + rz_panel_1 * 10
# SIMT: ws_r_1 = ws_tile * 8 + ko
# SIMT-NEXT: T.ptx_mbarrier_wait(ws_mbar, ws_r_1 % 3, ws_r_1 // 3 % 2)
# SIMT: T.ptx_wgmma_fence()
# SIMT: T.ptx_wgmma_ss(C_local, mi_1 * 128 + nt * 128, A_shared, ws_r_1 % 3 * 8192 + (kk // 4 * 8192 + ((wg_m * 64 + mi_1 * 128) * 64 + kk % 4 * 16)), 128, 16, 1024, 0, B_shared, ws_r_1 % 3 * 16384 + ((wg_n * 4 + nt * 4) * 4096 + kk * 1024), 128, 8192, 1024, 1, 256, 1)
# SIMT: T.ptx_wgmma_commit()
# SIMT-NEXT: T.ptx_wgmma_wait(0, C_local, 0, 128)
# SIMT-NEXT: if T.get_thread_binding(0) % 32 == 0:
# SIMT-NEXT: T.ptx_mbarrier_arrive(ws_mbar, ws_r_1 % 3 + 3)
# The TMA-store epilogue (lib/Lower/Hopper/lower_epilogue.c), per consumer warpgroup:
# its own named barrier (2 + warpgroup), stmatrix.x4 of 16x16 blocks into the
# 128-byte-swizzled image, the async-proxy fence, and its thread 0 storing its
# 64 rows as four 64x64 boxes; no barrier over the whole block.
# The issuer waits for its previous tile's stores to have read the image
# only here, before the image is written again, and once more at the end.
# SIMT-NOT: T.sync_threads()
# SIMT: ep_wg = T.get_thread_binding(0) // 128
# SIMT-NEXT: if T.get_thread_binding(0) % 128 == 0:
# SIMT-NEXT: T.ptx_bulk_wait_group(0, 1)
# SIMT-NEXT: if ep_wg == 0:
# SIMT-NEXT: T.ptx_bar_sync(2, 128)
# SIMT-NEXT: else:
# SIMT-NEXT: T.ptx_bar_sync(3, 128)
# SIMT: for ep_jp in T.unroll(16):
# SIMT: T.ptx_stmatrix(C_stage, {{.*}}, ep_pack, 0, 4, 0)
# SIMT: T.ptx_fence_proxy_async()
# SIMT: T.ptx_bar_sync(3, 128)
# SIMT: if T.get_thread_binding(0) % 128 == 0:
# SIMT-NEXT: T.ptx_tma_store(C, C_stage, ep_c0 // 64 * 8192 + ep_wm0 * 1024, 128, 64, 64, by * 128 + ep_wm0 * 16, bx * 256 + ep_c0)
# SIMT-COUNT-3: T.ptx_tma_store(C, C_stage,
# SIMT-NEXT: T.ptx_bulk_commit_group()
# SIMT-NEXT: T.ptx_bulk_wait_group(0, 1)
# SIMT-NOT: T.ptx_tma_store

# REMARK: gemm.py:15:{{[0-9]+}}: remark: T.Pipelined GEMM loop takes the Hopper path: 3-stage TMA pipeline on mbarriers, a producer warpgroup, T.gemm as wgmma over 2 consumer warpgroups, a persistent grid of min(tiles, SMs) blocks (several tiles a block: a 16-bit C tile is stored by TMA, stmatrix into shared memory first)
# examples/gemm.py as written (128x128x32, 128 threads): one consumer warpgroup
# runs two m64n128k16 per k-step; its accumulator is the interleaved MMA_C
# layout (warp w: rows 16w.. and 64+16w..); A is 64-byte swizzled.
# DEFAULT: remark: T.Pipelined GEMM loop takes the Hopper path: 3-stage TMA pipeline on mbarriers, a producer warpgroup, T.gemm as wgmma over 1 consumer warpgroups, a persistent grid of min(tiles, SMs) blocks
# DEFAULT: with T.Kernel(64, threads=256) as ws_block:
# DEFAULT: T.ptx_wgmma_ss(C_local, mi_1 * 64 + nt * 64, A_shared, ws_r_1 % 3 * 4096 + (kk // 2 * 4096 + (mi_1 * 2048 + kk % 2 * 16)), 64, 16, 512, 0, B_shared, ws_r_1 % 3 * 4096 + ((wg_n * 2 + nt * 2) * 2048 + kk * 1024), 128, 4096, 1024, 1, 128, 1)
# SMALLM: remark: T.Pipelined loop stays on the cp.async + mma.sync path: block_M is not a multiple of 64 that splits evenly over the consumer warpgroups (threads / 128)
# SM80: remark: T.Pipelined loop stays on the cp.async + mma.sync path: the target has no wgmma/TMA
# BIGACC: remark: T.Pipelined loop stays on the cp.async + mma.sync path: the accumulators would take more than 192 registers per consumer thread (use more threads)
# 8 tiles on 8 SMs: each block runs one tile, so the epilogue stores with
# st.global (16-byte vectors) instead of TMA (tl_ws_multi_tile, lib/Lower/Hopper/warp_specialize.c).
# ONETILE: T.ptx_wgmma_wait(0, C_local, 0, 128)
# ONETILE-NOT: T.ptx_tma_store
# ONETILE-NOT: T.ptx_bulk_wait_group
# ONETILE: C[{{.*}}T.Ramp({{.*}}, 1, 8)] = C_stage[
# ONETILEREMARK: a persistent grid of min(tiles, SMs) blocks (one tile a block: C is stored with st.global)
