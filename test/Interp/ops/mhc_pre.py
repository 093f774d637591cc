# REQUIRES: tl-run
# TileLang's deepseek_mhc/example_mhc_pre.py big-fuse kernel (mhc_pre_big_fuse_tilelang, kept as it is but for
# its defaults and the pass config TL_PTXAS_REGISTER_USAGE_LEVEL, which only the Python door accepts, with a
# warning) at small sizes: 96 threads; warp 0 (`if T.get_thread_binding() < 32:`, a thread-range scope) runs the
# sinkhorn iterations on the 4x4 fragment cm, whose column sums T.reduce_sum(cm, col_sum, dim=0) are read back as
# col_sum[k] in T.Parallel(hc_mult, hc_mult) loops (docs/layouts.md "Column statistics": col_sum takes the COLS
# layout of cm's ROWS layout, element k on the threads that hold column k, combined across the 4 row groups by
# shuffles 16 and 8); warps 1-2 the pre mix and a T.Pipelined weighted sum.  rms_eps = 2 keeps
# rsqrt(sum / (hc_mult * hidden_size) + rms_eps) real for random inputs in [-1, 1).  Checked on the CPU executor
# against the reference evaluator (sm_80 and sm_90a, two schedules, one, three and ten sinkhorn iterations,
# hidden_size 768 and 4096 as the example runs it with n_splits = 1).
# RUN: %tl-run --device=cpu --check --dim num_tokens=3,5 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --schedule-seed=5 --dim num_tokens=2 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --target=sm_90a -D sinkhorn_repeat=1 --dim num_tokens=2 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D hidden_size=4096 -D n_splits=1 -D sinkhorn_repeat=10 --dim num_tokens=2 %s | FileCheck %s
# RUN: %tl-opt --dump-layouts %s | FileCheck %s --check-prefix=LAYOUT
# RUN: %tl-opt --emit=simt %s | FileCheck %s --check-prefix=SIMT
# CHECK-NOT: check: FAIL
# CHECK: check: PASS
# LAYOUT: buffer cm: local.fragment float32[4, 4]
# LAYOUT-NEXT: layout: ROWS (4 rows x 4 columns; 4 groups of 8 threads
# LAYOUT: buffer col_sum: local.fragment float32[4]
# LAYOUT-NEXT: layout: COLS (column statistics of a ROWS layout of 4 groups of 8 threads: element c in thread (c/4) % 8 of each of the 4 groups holding rows), 4 registers per thread
# LAYOUT: replicas: 4 threads per element (replica 0 shown; element 0 is in T0:r0 T8:r0 T16:r0 T24:r0)
# SIMT: T.shfl_xor(red_acc_{{[0-9]+}}[rk_{{[0-9]+}}], 16, 32)
# SIMT-NEXT: T.shfl_xor(red_acc_{{[0-9]+}}[rk_{{[0-9]+}}], 8, 32)
# SIMT-NEXT: for rk_{{[0-9]+}} in T.unroll(4):
# SIMT-NEXT: col_sum[rk_{{[0-9]+}}] = red_acc
import math

import tilelang
import tilelang.language as T


@tilelang.jit(
    pass_configs={tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True},
)
def mhc_pre_big_fuse_tilelang(
    gemm_out_mul,
    gemm_out_sqrsum,
    hc_scale,
    hc_base,
    residual,
    post_mix,
    comb_mix,
    layer_input,
    hidden_size: int = 768,
    rms_eps: float = 2.0,
    hc_pre_eps: float = 1e-6,
    hc_sinkhorn_eps: float = 1e-6,
    hc_post_mult_value: float = 2.0,
    sinkhorn_repeat: int = 3,
    n_splits: int = 2,
    hc_mult: int = 4,
):
    """Deeply fused kernels, everything other than gemm & sqrsum in mHC pre block."""
    num_tokens = T.dynamic("num_tokens")
    hc_mult3 = hc_mult * (2 + hc_mult)
    hidden_block = math.gcd(512, hidden_size)

    gemm_out_mul: T.Tensor[[n_splits, num_tokens, hc_mult3], T.float32]
    gemm_out_sqrsum: T.Tensor[[n_splits, num_tokens], T.float32]
    hc_scale: T.Tensor[[3], T.float32]
    hc_base: T.Tensor[[hc_mult3], T.float32]
    residual: T.Tensor[[num_tokens, hc_mult, hidden_size], T.bfloat16]
    # outputs
    post_mix: T.Tensor[[num_tokens, hc_mult], T.float32]
    comb_mix: T.Tensor[[num_tokens, hc_mult * hc_mult], T.float32]
    layer_input: T.Tensor[[num_tokens, hidden_size], T.bfloat16]

    with T.Kernel(num_tokens, threads=96) as i:
        ##################################################################
        # _pre_norm_fn_fwd_norm
        rms = T.alloc_fragment(1, T.float32)
        mixes = T.alloc_fragment(hc_mult3, T.float32)
        T.clear(mixes)
        rms[0] = 0
        for i_split in T.serial(n_splits):
            rms[0] += gemm_out_sqrsum[i_split, i]
        rms[0] = T.rsqrt(rms[0] / (hc_mult * hidden_size) + rms_eps)
        for j in T.Parallel(hc_mult3):
            mixes[j] = 0
            for i_split in T.serial(n_splits):
                mixes[j] += gemm_out_mul[i_split, i, j]
            mixes[j] *= rms[0]
        mixes_shared = T.alloc_shared(hc_mult3, T.float32)
        T.copy(mixes, mixes_shared)

        if T.get_thread_binding() < 32:
            ##################################################################
            # _pre_split_mixes_fwd (post & comb)
            cm = T.alloc_fragment((hc_mult, hc_mult), T.float32)
            for j in T.Parallel(hc_mult):
                post_mix[i, j] = T.sigmoid(mixes_shared[j + hc_mult] * hc_scale[1] + hc_base[j + hc_mult]) * hc_post_mult_value
            for j, k in T.Parallel(hc_mult, hc_mult):
                cm[j, k] = mixes_shared[j * hc_mult + k + hc_mult * 2] * hc_scale[2] + hc_base[j * hc_mult + k + hc_mult * 2]

            ##################################################################
            # _sinkhorn_fwd
            row_sum = T.alloc_fragment(hc_mult, T.float32)
            col_sum = T.alloc_fragment(hc_mult, T.float32)

            # comb = comb.softmax(-1) + eps
            row_max = T.alloc_fragment(hc_mult, T.float32)
            T.reduce_max(cm, row_max, dim=1)
            for j, k in T.Parallel(hc_mult, hc_mult):
                cm[j, k] = T.exp(cm[j, k] - row_max[j])
            T.reduce_sum(cm, row_sum, dim=1)
            for j, k in T.Parallel(hc_mult, hc_mult):
                cm[j, k] = cm[j, k] / row_sum[j] + hc_sinkhorn_eps

            # comb = comb / (comb.sum(-2) + eps)
            T.reduce_sum(cm, col_sum, dim=0)
            for j, k in T.Parallel(hc_mult, hc_mult):
                cm[j, k] = cm[j, k] / (col_sum[k] + hc_sinkhorn_eps)

            for _ in T.serial(sinkhorn_repeat - 1):
                # comb = comb / (comb.sum(-1) + eps)
                T.reduce_sum(cm, row_sum, dim=1)
                for j, k in T.Parallel(hc_mult, hc_mult):
                    cm[j, k] = cm[j, k] / (row_sum[j] + hc_sinkhorn_eps)

                # comb = comb / (comb.sum(-2) + eps)
                T.reduce_sum(cm, col_sum, dim=0)
                for j, k in T.Parallel(hc_mult, hc_mult):
                    cm[j, k] = cm[j, k] / (col_sum[k] + hc_sinkhorn_eps)

            # save comb_mix to global memory
            for j, k in T.Parallel(hc_mult, hc_mult):
                comb_mix[i, j * hc_mult + k] = cm[j, k]
        else:
            ##################################################################
            # _pre_split_mixes_fwd (pre)
            pre_mix_shared = T.alloc_shared(hc_mult, T.float32)
            for j in T.Parallel(hc_mult):
                pre_mix_shared[j] = (
                    T.sigmoid(
                        mixes_shared[j] * hc_scale[0] + hc_base[j],
                    )
                    + hc_pre_eps
                )
            ###################################################################
            # _pre_apply_mix_fwd
            for i0_h in T.Pipelined(hidden_size // hidden_block, num_stages=2):
                xs = T.alloc_shared((hc_mult, hidden_block), T.float32)
                xl = T.alloc_fragment((hc_mult, hidden_block), T.float32)
                T.copy(residual[i, 0, i0_h * hidden_block], xs)
                T.copy(xs, xl)

                ol = T.alloc_fragment(hidden_block, T.float32)
                T.clear(ol)

                for i_hc in T.serial(hc_mult):
                    pre = pre_mix_shared[i_hc]
                    for i1_h in T.Parallel(hidden_block):
                        ol[i1_h] += pre * xl[i_hc, i1_h]

                T.copy(ol, layer_input[i, i0_h * hidden_block])
