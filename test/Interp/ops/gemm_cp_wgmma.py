# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --target=sm_90a --check --remarks --kernel=pipe_gemm %s 2>&1 | FileCheck %s --check-prefix=NN
# RUN: %tl-run --device=cpu --target=sm_90a --check --kernel=pipe_gemm -D trans_B=True -D num_stages=2 %s | FileCheck %s --check-prefix=PASS
# RUN: %tl-run --device=cpu --target=sm_90a --check --schedule-seed=7 --kernel=pipe_gemm -D threads=256 -D block_M=128 -D block_N=128 -D block_K=64 %s | FileCheck %s --check-prefix=PASS
# RUN: %tl-run --device=cpu --target=sm_90a --check --kernel=pipe_gemm -D threads=256 -D block_M=64 -D block_N=128 -D trans_B=True -D num_stages=3 -D dtype=bfloat16 %s | FileCheck %s --check-prefix=PASS
# RUN: %tl-run --device=cpu --target=sm_90a --check --kernel=pipe_gemm -D trans_A=True -D M=192 -D N=64 -D K=96 -D block_N=64 %s | FileCheck %s --check-prefix=PASS
# RUN: %tl-run --device=cpu --target=sm_90a --check --kernel=pipe_gemm -D num_stages=0 -D accum_dtype=float16 %s | FileCheck %s --check-prefix=PASS
# RUN: %tl-run --device=cpu --target=sm_90a --check --remarks --kernel=dequant_gemm %s 2>&1 | FileCheck %s --check-prefix=DEQ
# RUN: %tl-run --device=cpu --target=sm_90a --check --schedule-seed=3 --kernel=dequant_gemm -D via_fragment=False -D threads=256 %s | FileCheck %s --check-prefix=PASS
# RUN: %tl-run --device=cpu --target=sm_90a --check --remarks --kernel=gqa_decode %s 2>&1 | FileCheck %s --check-prefix=GQA
# RUN: %tl-run --device=cpu --target=sm_90a --check --schedule-seed=5 --kernel=gqa_decode -D num_stages=0 -D block_N=128 %s | FileCheck %s --check-prefix=PASS
# RUN: %tl-opt --target=sm_90a --emit=simt --kernel=pipe_gemm %s | FileCheck %s --check-prefix=SIMT
# RUN: %tl-opt --target=sm_90a --emit=simt --kernel=gqa_decode %s | FileCheck %s --check-prefix=SIMTGQA
# RUN: %tl-opt --target=sm_90a --emit=ptx --kernel=dequant_gemm %s | FileCheck %s --check-prefix=PTX
# RUN: %tl-opt --target=sm_80 --emit=simt --kernel=pipe_gemm %s | FileCheck %s --check-prefix=SM80
# RUN: %tl-run --device=cpu --target=sm_90a --check --remarks --pass-config=tl.disable_wgmma --kernel=pipe_gemm %s 2>&1 | FileCheck %s --check-prefix=NOWG
# The proxy fence is what the executor's protocol check needs: without it (or with it before the
# cp.async wait that completes the copies) the wgmma's read of the tile is a reported error.
# RUN: %tl-opt --target=sm_90a --emit=simt --kernel=pipe_gemm %s > %t.simt
# RUN: sed '/T.ptx_fence_proxy_async()/d' %t.simt > %t.nofence.simt
# RUN: not %tl-run --device=cpu %t.nofence.simt 2>&1 | FileCheck %s --check-prefix=NOFENCE
# RUN: awk '/T.ptx_wait_group/ { held = $0; next } /T.ptx_fence_proxy_async/ { print; if (held != "") print held; held = ""; next } { if (held != "") print held; held = ""; print }' %t.simt > %t.early.simt
# RUN: not %tl-run --device=cpu %t.early.simt 2>&1 | FileCheck %s --check-prefix=EARLY
#
# T.gemm as wgmma outside the warp-specialized path (lib/Lower/Hopper/gemm_wgmma.c and proxy_fence.c;
# docs/hopper.md "cp.async + wgmma"), checked on the CPU SIMT executor against the reference evaluator:
#  - pipe_gemm: examples/gemm.py's loop with tl.disable_warp_specialized (as TileLang's
#    flash_decoding and dequantize examples set it): cp.async stages, T.gemm as wgmma; NN and NT,
#    transpose_A, bf16, a f16 accumulator, 0, 2 and 3 stages, 128 and 256 threads (64- and 128-row blocks);
#  - dequant_gemm: B's tile is written by the threads before the gemm (TileLang's
#    example_dequant_gemm_bf16_fp4_hopper simple form: 4-bit codes in uint8 pairs unpacked in a
#    T.Parallel into a fragment copied to the shared tile, or stored to it directly);
#  - gqa_decode: TileLang's example_gqa_decode no-split kernel, reduced (batch 1, 2 KV groups): Q·Kᵀ as
#    ss-form wgmma, the softmax on the wgmma accumulator, P·V as rs-form wgmma (P in registers).
import tilelang
import tilelang.language as T

# NN: remark: T.Pipelined loop takes the cp.async + wgmma path (its T.gemm as wgmma, not warp-specialized: tl.disable_warp_specialized is set)
# NN: check: PASS
# PASS: check: PASS
# DEQ: takes the cp.async + wgmma path
# DEQ: check: PASS
# GQA: takes the cp.async + wgmma path
# GQA: check: PASS
# SIMT: T.ptx_cp_async(
# SIMT: T.ptx_wait_group(1)
# SIMT-NEXT: T.ptx_fence_proxy_async()
# SIMT-NEXT: T.sync_threads()
# SIMT: T.ptx_wgmma_fence()
# SIMT: T.ptx_wgmma_ss(C_local
# SIMT: T.ptx_wgmma_commit()
# SIMT-NEXT: T.ptx_wgmma_wait(0, C_local
# SIMTGQA: T.ptx_fence_proxy_async()
# SIMTGQA: T.ptx_wgmma_ss(acc_s
# SIMTGQA: T.ptx_wgmma_rs(acc_o
# PTX: fence.proxy.async.shared::cta
# PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
# SM80-NOT: wgmma
# SM80-NOT: fence_proxy
# SM80: T.ptx_mma(
# NOWG: stays on the cp.async + mma.sync path: tl.disable_wgmma is set
# NOWG: check: PASS
# NOFENCE: proxy ordering: T.ptx_wgmma_ss of thread {{[0-9]+}} reads 'A_shared'{{.*}}executed no T.ptx_fence_proxy_async() after that store
# EARLY: proxy ordering: T.ptx_wgmma_ss of thread {{[0-9]+}} reads 'A_shared'{{.*}}after the T.ptx_wait_group that completed it


@tilelang.jit(out_idx=[2], pass_configs={"tl.disable_warp_specialized": True})
def pipe_gemm(M=128, N=128, K=128, block_M=64, block_N=128, block_K=32, dtype="float16", accum_dtype="float32",
              num_stages=3, threads=128, trans_A=False, trans_B=False):
    A_shape = (K, M) if trans_A else (M, K)
    B_shape = (N, K) if trans_B else (K, N)
    A_tile = (block_K, block_M) if trans_A else (block_M, block_K)
    B_tile = (block_N, block_K) if trans_B else (block_K, block_N)

    @T.prim_func
    def pipe_main(A: T.Tensor(A_shape, dtype), B: T.Tensor(B_shape, dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared(A_tile, dtype)
            B_shared = T.alloc_shared(B_tile, dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                if trans_A:
                    T.copy(A[ko * block_K, by * block_M], A_shared)
                else:
                    T.copy(A[by * block_M, ko * block_K], A_shared)
                if trans_B:
                    T.copy(B[bx * block_N, ko * block_K], B_shared)
                else:
                    T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_A=trans_A, transpose_B=trans_B)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return pipe_main


@tilelang.jit(out_idx=[2], pass_configs={"tl.disable_warp_specialized": True})
def dequant_gemm(M=128, N=128, K=128, block_M=64, block_N=64, block_K=64, num_stages=2, threads=128,
                 via_fragment=True):
    dtype = "bfloat16"

    @T.prim_func
    def dequant_main(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K // 2), "uint8"), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_N, block_K // 2), "uint8")
            B_dequantize_shared = T.alloc_shared((block_N, block_K), dtype)
            B_local = T.alloc_fragment((block_N, block_K // 2), "uint8")
            B_dequantize_local = T.alloc_fragment((block_N, block_K), dtype)
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_local)
            for k in T.Pipelined(K // block_K, num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[bx * block_N, k * block_K // 2], B_shared)
                if via_fragment:
                    T.copy(B_shared, B_local)
                    for i, j in T.Parallel(block_N, block_K):
                        B_dequantize_local[i, j] = T.cast(
                            T.cast((B_local[i, j // 2] >> (4 * (j % 2))) & 15, "int32") - 8, dtype)
                    T.copy(B_dequantize_local, B_dequantize_shared)
                else:
                    for i, j in T.Parallel(block_N, block_K):
                        B_dequantize_shared[i, j] = T.cast(
                            T.cast((B_shared[i, j // 2] >> (4 * (j % 2))) & 15, "int32") - 8, dtype)
                T.gemm(A_shared, B_dequantize_shared, C_local, transpose_B=True)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return dequant_main


@tilelang.jit(out_idx=[4], pass_configs={"tl.disable_warp_specialized": True})
def gqa_decode(batch=1, heads=8, groups=2, seqlen_kv=256, dim=64, block_N=64, block_H=64, num_stages=2,
               threads=128):
    scale = (1.0 / dim) ** 0.5 * 1.44269504
    dtype = "float16"
    accum_dtype = "float32"
    kv_group_num = heads // groups
    valid_block_H = min(block_H, kv_group_num)

    @T.prim_func
    def gqa_main(Q: T.Tensor([batch, heads, dim], dtype), K: T.Tensor([batch, seqlen_kv, groups, dim], dtype),
                 V: T.Tensor([batch, seqlen_kv, groups, dim], dtype), mask: T.Tensor([batch, seqlen_kv, groups], "uint8"),
                 Output: T.Tensor([batch, heads, dim], dtype)):
        with T.Kernel(batch, heads // valid_block_H, 1, threads=threads) as (bx, by, bz):
            Q_shared = T.alloc_shared([block_H, dim], dtype)
            K_shared = T.alloc_shared([block_N, dim], dtype)
            V_shared = T.alloc_shared([block_N, dim], dtype)
            O_shared = T.alloc_shared([valid_block_H, dim], dtype)
            acc_s = T.alloc_fragment([block_H, block_N], accum_dtype)
            acc_s_cast = T.alloc_fragment([block_H, block_N], dtype)
            mask_local = T.alloc_fragment([block_N], "uint8")
            acc_o = T.alloc_fragment([block_H, dim], accum_dtype)
            scores_max = T.alloc_fragment([block_H], accum_dtype)
            scores_max_prev = T.alloc_fragment([block_H], accum_dtype)
            scores_scale = T.alloc_fragment([block_H], accum_dtype)
            scores_sum = T.alloc_fragment([block_H], accum_dtype)
            logsum = T.alloc_fragment([block_H], accum_dtype)

            bid = bx
            hid = by
            cur_kv_head = hid // (kv_group_num // valid_block_H)

            T.copy(Q[bid, hid * valid_block_H : hid * valid_block_H + block_H, :], Q_shared)
            T.fill(acc_o, 0)
            T.fill(logsum, 0)
            T.fill(scores_max, -T.infinity(accum_dtype))

            loop_range = T.ceildiv(seqlen_kv, block_N)
            for k in T.Pipelined(loop_range, num_stages=num_stages):
                T.copy(K[bid, k * block_N : (k + 1) * block_N, cur_kv_head, :], K_shared)
                T.copy(mask[bid, k * block_N : (k + 1) * block_N, cur_kv_head], mask_local)
                T.clear(acc_s)
                T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                for i, j in T.Parallel(block_H, block_N):
                    acc_s[i, j] = T.if_then_else(mask_local[j] != 0, acc_s[i, j], -T.infinity(accum_dtype))
                T.copy(scores_max, scores_max_prev)
                T.fill(scores_max, -T.infinity(accum_dtype))
                T.reduce_max(acc_s, scores_max, dim=1, clear=False)
                for i in T.Parallel(block_H):
                    scores_max[i] = T.max(scores_max[i], scores_max_prev[i])
                for i in T.Parallel(block_H):
                    scores_scale[i] = T.exp2(scores_max_prev[i] * scale - scores_max[i] * scale)
                for i, j in T.Parallel(block_H, block_N):
                    acc_s[i, j] = T.exp2(acc_s[i, j] * scale - scores_max[i] * scale)
                T.reduce_sum(acc_s, scores_sum, dim=1)
                for i in T.Parallel(block_H):
                    logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]
                T.copy(acc_s, acc_s_cast)
                for i, j in T.Parallel(block_H, dim):
                    acc_o[i, j] *= scores_scale[i]
                T.copy(V[bid, k * block_N : (k + 1) * block_N, cur_kv_head, :], V_shared)
                T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)
            for i, j in T.Parallel(block_H, dim):
                acc_o[i, j] /= logsum[i]
            T.copy(acc_o[:valid_block_H, :], O_shared)
            T.copy(O_shared, Output[bid, hid * valid_block_H : (hid + 1) * valid_block_H, :])

    return gqa_main
