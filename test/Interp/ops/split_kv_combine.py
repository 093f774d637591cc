# REQUIRES: tl-run
# The split-KV combine of TileLang's flash decoding (issue 30): a fragment of
# log-sum-exps lse[num_split, N] reduced along dim 0 and read back row by row
# beside vectors of N, as lse[k, j] in a T.Parallel(N) under a serial k
# (example_gqa_decode) or as T.copy(lse[k, :], lse_k) (example_mha_inference).
# It gets the STACKED layout (docs/layouts.md "Stacked fragments"): row k of
# lse lives on the threads that hold element j of the vectors, so the reads
# stay per thread (before, "layout conflict" / "sub-region ... not lowered
# yet"). form=2: T.copy of a sub-region of a fragment to shared and global
# memory (example_gqa_decode_varlen_logits: acc_o[:valid_H, :] → O_shared).
# form=4: a T.Parallel over shared memory that reads row statistics D[h] and
# indexes no fragment of its rows (the same example's S_shared[h, k] loop)
# runs row h on the holders of D[h], replica 0 storing.
# form=3: a stacked read of a gemm accumulator stays a located conflict.
# RUN: %tl-run --device=cpu --check %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --target=sm_90a %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D num_split=3 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D form=1 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D form=1 -D block_M=128 -D num_split=2 --target=sm_90a %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D form=2 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D form=2 -D valid=16 --target=sm_90a %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D form=4 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D form=4 --target=sm_90a %s | FileCheck %s
# RUN: %tl-opt --dump-layouts %s | FileCheck %s --check-prefix=LAYOUT
# RUN: %tl-opt --dump-layouts -D form=1 %s | FileCheck %s --check-prefix=LAYOUT1
# RUN: not %tl-opt --emit=simt -D form=3 %s 2>&1 | FileCheck %s --check-prefix=ERR
# CHECK: check: PASS
# CHECK-NOT: check: FAIL
# LAYOUT: buffer lse_local: local.fragment float16[4, 128]
# LAYOUT-NEXT: layout: STACKED (the layout of its last 1 dim repeated over its first 1, 4 times)
# LAYOUT: base: layout: REDUCER
# LAYOUT1: buffer lse_local: local.fragment float16[4, 64]
# LAYOUT1-NEXT: layout: STACKED
# ERR: split_kv_combine.py:[[@LINE+102]]:17: error: layout conflict for fragment 'acc': this op reads it as acc[l, n] on the threads that hold element n of 'vsum'
import tilelang
import tilelang.language as T


@tilelang.jit
def combine(heads=3, num_split=4, dim=128, block_M=64, valid=40, form=0):
    @T.prim_func
    def main(glse: T.Tensor((heads, num_split, 128), "float16"), Opart: T.Tensor((heads, num_split, dim), "float16"),
             Out: T.Tensor((heads, dim), "float16")):
        with T.Kernel(heads, threads=128) as by:
            po_local = T.alloc_fragment([dim], "float16")
            o_accum_local = T.alloc_fragment([dim], "float32")
            lse_local = T.alloc_fragment([num_split, 128], "float16")
            lse_logsum_local = T.alloc_fragment([128], "float32")
            lse_max_local = T.alloc_fragment([128], "float32")
            scale_local = T.alloc_fragment([128], "float32")
            T.clear(lse_logsum_local)
            T.clear(o_accum_local)
            for k, j in T.Parallel(num_split, 128):
                lse_local[k, j] = glse[by, k, j]
            T.reduce_max(lse_local, lse_max_local, dim=0, clear=True)
            for k in T.serial(num_split):
                for j in T.Parallel(128):
                    lse_logsum_local[j] += T.exp2(lse_local[k, j] - lse_max_local[j])
            for j in T.Parallel(128):
                lse_logsum_local[j] = T.log2(lse_logsum_local[j]) + lse_max_local[j]
            for k in T.serial(num_split):
                for i in T.Parallel(dim):
                    po_local[i] = Opart[by, k, i]
                for j in T.Parallel(128):
                    scale_local[j] = T.exp2(lse_local[k, j] - lse_logsum_local[j])
                for i in T.Parallel(dim):
                    o_accum_local[i] += po_local[i] * scale_local[i]
            for i in T.Parallel(dim):
                Out[by, i] = o_accum_local[i]

    @T.prim_func
    def rows(glse: T.Tensor((heads, num_split, block_M), "float16"),
             Opart: T.Tensor((heads, block_M, num_split, dim), "float16"), Out: T.Tensor((heads, block_M, dim), "float16")):
        with T.Kernel(heads, threads=128) as by:
            po_local = T.alloc_fragment([block_M, dim], "float16")
            o_accum_local = T.alloc_fragment([block_M, dim], "float32")
            o_shared = T.alloc_shared([block_M, dim], "float16")
            lse_local = T.alloc_fragment([num_split, block_M], "float16")
            lse_local_split = T.alloc_fragment([block_M], "float32")
            lse_logsum_local = T.alloc_fragment([block_M], "float32")
            lse_max_local = T.alloc_fragment([block_M], "float32")
            scale_local = T.alloc_fragment([block_M], "float32")
            T.clear(lse_logsum_local)
            T.clear(o_accum_local)
            T.copy(glse[by, :, 0:block_M], lse_local)
            T.reduce_max(lse_local, lse_max_local, dim=0, clear=True)
            for k in T.Pipelined(num_split):
                T.copy(lse_local[k, :], lse_local_split)
                for i in T.Parallel(block_M):
                    lse_logsum_local[i] += T.exp2(lse_local_split[i] - lse_max_local[i])
            for i in T.Parallel(block_M):
                lse_logsum_local[i] = T.log2(lse_logsum_local[i]) + lse_max_local[i]
            for k in T.Pipelined(num_split, num_stages=2):
                T.copy(Opart[by, 0:block_M, k, :], po_local)
                for i in T.Parallel(block_M):
                    lse_local_split[i] = lse_local[k, i]
                for i in T.Parallel(block_M):
                    scale_local[i] = T.exp2(lse_local_split[i] - lse_logsum_local[i])
                for i, j in T.Parallel(block_M, dim):
                    o_accum_local[i, j] += po_local[i, j] * scale_local[i]
            T.copy(o_accum_local, o_shared)
            T.copy(o_shared, Out[by, :, :])

    @T.prim_func
    def sub(A: T.Tensor((64, 32), "float16"), B: T.Tensor((32, 64), "float16"), R: T.Tensor((8, 64), "float32"),
            Out: T.Tensor((64, 64), "float16")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((64, 32), "float16")
            B_s = T.alloc_shared((32, 64), "float16")
            O_s = T.alloc_shared((valid, 64), "float16")
            acc = T.alloc_fragment((64, 64), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.clear(acc)
            T.gemm(A_s, B_s, acc, policy=T.GemmWarpPolicy.FullRow)
            for i, j in T.Parallel(64 - valid, 64):
                Out[valid + i, j] = 0
            T.copy(acc[:valid, :], O_s)
            T.copy(O_s, Out[0:valid, :])
            for k in T.serial(8):
                T.copy(acc[valid + k, :], R[k, :])

    @T.prim_func
    def bad(A: T.Tensor((64, 32), "float16"), B: T.Tensor((32, 64), "float16"), Out: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((64, 32), "float16")
            B_s = T.alloc_shared((32, 64), "float16")
            acc = T.alloc_fragment((64, 64), "float32")
            vsum = T.alloc_fragment((64,), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.clear(acc)
            T.gemm(A_s, B_s, acc)
            T.clear(vsum)
            for k in T.serial(64):
                for j in T.Parallel(64):
                    vsum[j] += acc[k, j]
            T.copy(vsum, Out)

    @T.prim_func
    def stat(A: T.Tensor((64, 32), "float16"), B: T.Tensor((32, 64), "float16"), S: T.Tensor((64, 12), "float32"),
             Out: T.Tensor((64, 12), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((64, 32), "float16")
            B_s = T.alloc_shared((32, 64), "float16")
            S_s = T.alloc_shared((64, 12), "float32")
            acc = T.alloc_fragment((64, 64), "float32")
            rmax = T.alloc_fragment((64,), "float32")
            rsum = T.alloc_fragment((64,), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.copy(S, S_s)
            T.clear(acc)
            T.gemm(A_s, B_s, acc, policy=T.GemmWarpPolicy.FullRow)
            T.reduce_max(acc, rmax, dim=1)
            T.reduce_sum(acc, rsum, dim=1)
            for h, k in T.Parallel(64, 12):
                S_s[h, k] = T.exp2(S_s[h, k] - rmax[h]) / rsum[h]
            T.copy(S_s, Out)

    if form == 1:
        return rows
    if form == 4:
        return stat
    if form == 2:
        return sub
    if form == 3:
        return bad
    return main

