# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check --kernel=mhc_post_kernel %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --schedule-seed=4 --kernel=mhc_post_kernel %s | FileCheck %s
# TileLang's deepseek_mhc example_mhc_post kernel at small sizes (2 tokens,
# hc 4, hidden 512 in blocks of 256, 128 threads), checked on the CPU SIMT
# executor against the reference evaluator: a fragment read by the loop's
# first index (c_local[i_hco]) and by a serial index (a_local[i_hci, i_hco])
# beside a (hc, h_blk) partition, a T.Pipelined loop staging b and d.
# CHECK: check: PASS
import math

import tilelang
import tilelang.language as T


@tilelang.jit
def mhc_post_kernel(n=2, hc=4, hidden=512, n_thr=128, h_blk=256):
    h = hidden
    h_blk = math.gcd(hidden, h_blk)

    @T.prim_func
    def mhc_post_main(
        a: T.Tensor((n, hc, hc), "float32"),
        b: T.Tensor((n, hc, h), "bfloat16"),
        c: T.Tensor((n, hc), "float32"),
        d: T.Tensor((n, h), "bfloat16"),
        x: T.Tensor((n, hc, h), "bfloat16"),
    ):
        with T.Kernel(n, threads=n_thr) as i_n:
            x_shared = T.alloc_shared((hc, h_blk), "bfloat16")
            b_shared = T.alloc_shared((hc, h_blk), "bfloat16")
            d_shared = T.alloc_shared(h_blk, "bfloat16")
            x_local = T.alloc_fragment((hc, h_blk), "float32")
            b_local = T.alloc_fragment((hc, h_blk), "float32")
            d_local = T.alloc_fragment(h_blk, "float32")
            a_local = T.alloc_fragment((hc, hc), "float32")
            c_local = T.alloc_fragment(hc, "float32")
            T.copy(a[i_n, 0, 0], a_local)
            T.copy(c[i_n, 0], c_local)
            for i0_h in T.Pipelined(T.ceildiv(h, h_blk), num_stages=2):
                T.copy(b[i_n, 0, i0_h * h_blk], b_shared)
                T.copy(d[i_n, i0_h * h_blk], d_shared)
                T.copy(b_shared, b_local)
                T.copy(d_shared, d_local)
                for i_hco, i1_h in T.Parallel(hc, h_blk):
                    x_local[i_hco, i1_h] = c_local[i_hco] * d_local[i1_h]
                    for i_hci in T.serial(hc):
                        x_local[i_hco, i1_h] += a_local[i_hci, i_hco] * b_local[i_hci, i1_h]
                T.copy(x_local, x_shared)
                T.copy(x_shared, x[i_n, 0, i0_h * h_blk])

    return mhc_post_main
