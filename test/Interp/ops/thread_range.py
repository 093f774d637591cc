# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check --kernel=mhc_pre_fuse %s | FileCheck %s --check-prefix=CHECK
# RUN: %tl-run --device=cpu --check --schedule-seed=7 --kernel=mhc_pre_fuse %s | FileCheck %s --check-prefix=CHECK
# RUN: %tl-run --device=cpu --check --kernel=tr_small %s | FileCheck %s --check-prefix=CHECK
# RUN: %tl-run --device=cpu --check --schedule-seed=3 --kernel=tr_small %s | FileCheck %s --check-prefix=CHECK
# RUN: %tl-opt --kernel=tr_small %s | FileCheck %s --check-prefix=TIR
# RUN: %tl-opt --kernel=tr_small %s > %t.tir && %tl-opt %t.tir | diff %t.tir -
# RUN: %tl-opt --emit=simt --target=sm_90a --kernel=mhc_pre_fuse %s | FileCheck %s --check-prefix=SIMT
# RUN: %tl-opt --emit=ptx --target=sm_80 --kernel=tr_small %s | FileCheck %s --check-prefix=PTX
# Branches on the thread index that hold tile work over a range of threads
# other than one warpgroup (docs/language.md "Branches on the thread
# index"): `if tx < 32:` / `else:` become T.thread_range scopes whose tile
# ops (T.Parallel, T.copy, T.reduce_*, T.clear) run over exactly those
# threads, fragment layouts inferred for that many threads, checked on the
# CPU SIMT executor against the reference evaluator:
#  - mhc_pre_fuse: TileLang's deepseek_mhc example_mhc_pre big-fuse kernel
#    (96 threads; warp 0 computes post_mix and the row softmax / sinkhorn
#    row steps of the 4x4 comb matrix, warps 1-2 the pre mix and the
#    weighted sum over hc_mult in a T.Pipelined loop, run as T.serial)
#    at small sizes; its column sums (T.reduce_sum(cm, col_sum, dim=0) read
#    as col_sum[k] in a (j, k) loop) are replaced by a second row step here
#    (the kernel as written, column sums included: mhc_pre.py).  rms takes
#    T.abs so random inputs give no NaN.
#  - tr_small: 128 threads; `if tx < 32:` T.copy to a fragment, T.Parallel,
#    T.reduce_sum, T.copy out; `elif tx >= 64 and tx < 128:` T.copy through
#    shared memory (a named barrier of its 64 threads) and T.Parallel.
# CHECK: check: PASS
# TIR: if T.thread_range(0, 32):
# TIR: if T.thread_range(64, 128):
# SIMT: if T.get_thread_binding(0) < 32:
# SIMT: if T.get_thread_binding(0) >= 32 and T.get_thread_binding(0) < 96:
# SIMT: T.ptx_bar_sync(2, 64)
# PTX: bar.sync
import math

import tilelang
import tilelang.language as T


@tilelang.jit
def mhc_pre_fuse(hidden_size=512, n_splits=2, hc_mult=4, sinkhorn_repeat=3, num_tokens=3):
    hc_mult3 = hc_mult * (2 + hc_mult)
    hidden_block = math.gcd(256, hidden_size)

    @T.prim_func
    def mhc_main(
        gemm_out_mul: T.Tensor((n_splits, num_tokens, hc_mult3), "float32"),
        gemm_out_sqrsum: T.Tensor((n_splits, num_tokens), "float32"),
        hc_scale: T.Tensor((3,), "float32"),
        hc_base: T.Tensor((hc_mult3,), "float32"),
        residual: T.Tensor((num_tokens, hc_mult, hidden_size), "bfloat16"),
        post_mix: T.Tensor((num_tokens, hc_mult), "float32"),
        comb_mix: T.Tensor((num_tokens, hc_mult * hc_mult), "float32"),
        layer_input: T.Tensor((num_tokens, hidden_size), "bfloat16"),
    ):
        with T.Kernel(num_tokens, threads=96) as i:
            rms = T.alloc_fragment(1, "float32")
            mixes = T.alloc_fragment(hc_mult3, "float32")
            T.clear(mixes)
            rms[0] = 0
            for i_split in T.serial(n_splits):
                rms[0] += gemm_out_sqrsum[i_split, i]
            rms[0] = T.rsqrt(T.abs(rms[0]) / (hc_mult * hidden_size) + 1e-6)
            for j in T.Parallel(hc_mult3):
                mixes[j] = 0
                for i_split in T.serial(n_splits):
                    mixes[j] += gemm_out_mul[i_split, i, j]
                mixes[j] *= rms[0]
            mixes_shared = T.alloc_shared(hc_mult3, "float32")
            T.copy(mixes, mixes_shared)
            if T.get_thread_binding() < 32:
                cm = T.alloc_fragment((hc_mult, hc_mult), "float32")
                for j in T.Parallel(hc_mult):
                    post_mix[i, j] = T.sigmoid(mixes_shared[j + hc_mult] * hc_scale[1] + hc_base[j + hc_mult]) * 2.0
                for j, k in T.Parallel(hc_mult, hc_mult):
                    cm[j, k] = mixes_shared[j * hc_mult + k + hc_mult * 2] * hc_scale[2] + hc_base[j * hc_mult + k + hc_mult * 2]
                row_sum = T.alloc_fragment(hc_mult, "float32")
                col_sum = T.alloc_fragment(hc_mult, "float32")
                row_max = T.alloc_fragment(hc_mult, "float32")
                T.reduce_max(cm, row_max, dim=1)
                for j, k in T.Parallel(hc_mult, hc_mult):
                    cm[j, k] = T.exp(cm[j, k] - row_max[j])
                T.reduce_sum(cm, row_sum, dim=1)
                for j, k in T.Parallel(hc_mult, hc_mult):
                    cm[j, k] = cm[j, k] / row_sum[j] + 1e-6
                for _ in T.serial(sinkhorn_repeat - 1):
                    T.reduce_sum(cm, row_sum, dim=1)
                    for j, k in T.Parallel(hc_mult, hc_mult):
                        cm[j, k] = cm[j, k] / (row_sum[j] + 1e-6)
                    T.reduce_max(cm, col_sum, dim=1)
                    for j, k in T.Parallel(hc_mult, hc_mult):
                        cm[j, k] = cm[j, k] / (col_sum[j] + 1e-6)
                for j, k in T.Parallel(hc_mult, hc_mult):
                    comb_mix[i, j * hc_mult + k] = cm[j, k]
            else:
                pre_mix_shared = T.alloc_shared(hc_mult, "float32")
                for j in T.Parallel(hc_mult):
                    pre_mix_shared[j] = T.sigmoid(mixes_shared[j] * hc_scale[0] + hc_base[j]) + 1e-6
                for i0_h in T.Pipelined(hidden_size // hidden_block, num_stages=2):
                    xs = T.alloc_shared((hc_mult, hidden_block), "float32")
                    xl = T.alloc_fragment((hc_mult, hidden_block), "float32")
                    T.copy(residual[i, 0, i0_h * hidden_block], xs)
                    T.copy(xs, xl)
                    ol = T.alloc_fragment(hidden_block, "float32")
                    T.clear(ol)
                    for i_hc in T.serial(hc_mult):
                        pre = pre_mix_shared[i_hc]
                        for i1_h in T.Parallel(hidden_block):
                            ol[i1_h] += pre * xl[i_hc, i1_h]
                    T.copy(ol, layer_input[i, i0_h * hidden_block])

    return mhc_main


@tilelang.jit
def tr_small(M=16, N=64):
    @T.prim_func
    def tr_small_main(A: T.Tensor((M, N), "float32"), S: T.Tensor((M,), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            tx = T.get_thread_binding()
            if tx < 32:
                f = T.alloc_fragment((M, N), "float32")
                s = T.alloc_fragment((M,), "float32")
                T.copy(A, f)
                for i, j in T.Parallel(M, N):
                    f[i, j] = f[i, j] * 2.0
                T.reduce_sum(f, s, dim=1)
                T.copy(s, S)
            elif tx >= 64 and tx < 128:
                a_s = T.alloc_shared((M, N), "float32")
                g = T.alloc_fragment((M, N), "float32")
                T.copy(A, a_s)
                T.copy(a_s, g)
                for i, j in T.Parallel(M, N):
                    g[i, j] = g[i, j] + a_s[M - 1 - i, j]
                T.copy(g, B)

    return tr_small_main
