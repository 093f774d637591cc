# REQUIRES: tl-run
# RUN: %tl-opt --target=sm_90a --emit=ptx --remarks %s -o %t.ptx 2>&1 | FileCheck %s --check-prefix=WIDE
# RUN: FileCheck %s --check-prefix=PTX < %t.ptx
# RUN: %tl-opt --target=sm_90a --emit=ptx --remarks -D per_thread=True %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOCAL
# RUN: %tl-opt --target=sm_90a --emit=ptx --remarks -D block_M=256 %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=BIG
# RUN: %tl-run --device=cpu --target=sm_90a --check --remarks %s 2>&1 | FileCheck %s --check-prefix=EXEC
# RUN: %tl-run --device=cpu --target=sm_90a --check --remarks --schedule-seed=7 -D stats=True --out-idx=3,4 %s 2>&1 | FileCheck %s --check-prefix=STATS
# RUN: %tl-run --device=cpu --target=sm_90a --check --remarks --pass-config=tl.disable_tma_lower %s 2>&1 | FileCheck %s --check-prefix=CPW
# RUN: %tl-run --device=cpu --target=sm_90a --check --remarks -D nested=True %s 2>&1 | FileCheck %s --check-prefix=NESTED
# RUN: %tl-run --device=cpu --target=sm_90a --check --remarks --pass-config=tl.disable_tma_lower -D per_thread=True %s 2>&1 | FileCheck %s --check-prefix=CPW-LOCAL
# An attention loop with block_M 128 on the kernel's 128 threads (TileLang's example_mha_fwd_bshd as its main()
# runs it): the attention form needs block_M = 64 x the consumer warpgroups, so warp-specialize runs the kernel
# on 256 consumer threads (+ the producer's 128: .maxntid 384) when nothing in it depends on its thread count.
# A local buffer (per-thread state) keeps the kernel's 128 threads and the
# mma.sync path; so does a block_M whose warpgroups would exceed two (256 rows: 512 threads).
# The CPU executor runs each against the reference evaluator.  stats=True: the loop also stores each key block's
# row maxima into a shared tile (TileLang's decode kernels' S_shared[:, k]): consumer-private shared memory in
# the loop keeps the warp-specialized path.  tl.disable_tma_lower (no TMA: the cp.async + wgmma path, TileLang's
# example_mha_inference) widens the same way; a local buffer keeps it on mma.sync.
# EXEC: remark: T.Pipelined attention loop takes the Hopper path
# EXEC: check: PASS
# STATS: remark: T.Pipelined attention loop takes the Hopper path
# STATS: output Mx shape=[1,2,256,4]
# STATS: check: PASS
# CPW: remark: T.Pipelined loop takes the cp.async + wgmma path (its T.gemm as wgmma, not warp-specialized: tl.disable_tma_lower is set; 256 threads where the kernel asks for 128: nothing in it depends on its thread count)
# CPW: check: PASS
# NESTED: remark: T.Pipelined loop takes the cp.async + wgmma path (its T.gemm as wgmma, not warp-specialized: a statement in the loop holds a second T.Pipelined loop; 256 threads where the kernel asks for 128
# NESTED: check: PASS
# CPW-LOCAL: remark: T.Pipelined loop stays on the cp.async + mma.sync path: tl.disable_tma_lower is set (T.gemm not as wgmma either: a fragment ties
# CPW-LOCAL: check: PASS
# WIDE: attention_widen.py:[[#LOOP:]]:13: remark: T.Pipelined attention loop takes the Hopper path: 1-stage TMA pipeline on mbarriers {{.*}} two T.gemm as wgmma (ss, then rs) over 2 consumer warpgroups of one m64 block each (256 threads where the kernel asks for 128: block_M is 64 x the consumer warpgroups, and nothing in the kernel depends on its thread count)
# PTX: .maxntid 384, 1, 1
# PTX: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
# LOCAL: remark: T.Pipelined loop stays on the cp.async + mma.sync path: block_M is not 64 x the consumer warpgroups (threads / 128)
# BIG: remark: T.Pipelined loop stays on the cp.async + mma.sync path: block_M is not 64 x the consumer warpgroups (threads / 128)
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[3])
def attn(seq=256, dim=64, block_M=128, block_N=64, per_thread=False, stats=False, nested=False):
    scale = (1.0 / dim) ** 0.5 * 1.44269504
    shape = [1, 2, seq, dim]
    nkb = (seq + block_N - 1) // block_N

    @T.prim_func
    def main(Q: T.Tensor(shape, "float16"), K: T.Tensor(shape, "float16"), V: T.Tensor(shape, "float16"),
             O: T.Tensor(shape, "float16"), Mx: T.Tensor([1, 2, seq, nkb], "float")):
        with T.Kernel(T.ceildiv(seq, block_M), 2, 1, threads=128) as (bx, by, bz):
            q = T.alloc_shared([block_M, dim], "float16")
            k = T.alloc_shared([block_N, dim], "float16")
            v = T.alloc_shared([block_N, dim], "float16")
            s = T.alloc_fragment([block_M, block_N], "float")
            p = T.alloc_fragment([block_M, block_N], "float16")
            o = T.alloc_fragment([block_M, dim], "float")
            m = T.alloc_fragment([block_M], "float")
            m_prev = T.alloc_fragment([block_M], "float")
            l = T.alloc_fragment([block_M], "float")
            l_blk = T.alloc_fragment([block_M], "float")
            S = T.alloc_shared([block_M, nkb], "float")
            if per_thread:
                mine = T.alloc_local([1], "float")
                mine[0] = 0
            T.copy(Q[bz, by, bx * block_M:(bx + 1) * block_M, :], q)
            T.fill(o, 0)
            T.fill(l, 0)
            T.fill(m, -T.infinity("float"))
            for kb in T.Pipelined(T.ceildiv(seq, block_N), num_stages=1):
                T.copy(K[bz, by, kb * block_N:(kb + 1) * block_N, :], k)
                T.clear(s)
                T.gemm(q, k, s, transpose_B=True)
                T.copy(m, m_prev)
                T.reduce_max(s, m, dim=1, clear=False)
                if stats:
                    T.copy(m, S[:, kb])
                for i, j in T.Parallel(block_M, block_N):
                    s[i, j] = T.exp2(s[i, j] * scale - m[i] * scale)
                if nested:
                    for t in T.Pipelined(1, num_stages=1):
                        T.reduce_sum(s, l_blk, dim=1)
                else:
                    T.reduce_sum(s, l_blk, dim=1)
                for i in T.Parallel(block_M):
                    l[i] = l[i] * T.exp2(m_prev[i] * scale - m[i] * scale) + l_blk[i]
                for i, j in T.Parallel(block_M, dim):
                    o[i, j] *= T.exp2(m_prev[i] * scale - m[i] * scale)
                T.copy(s, p)
                T.copy(V[bz, by, kb * block_N:(kb + 1) * block_N, :], v)
                T.gemm(p, v, o)
            for i, j in T.Parallel(block_M, dim):
                o[i, j] /= l[i]
            T.copy(o, O[bz, by, bx * block_M:(bx + 1) * block_M, :])
            if stats:
                T.copy(S, Mx[bz, by, bx * block_M:(bx + 1) * block_M, :])

    return main
