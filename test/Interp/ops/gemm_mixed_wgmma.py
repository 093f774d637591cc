# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --target=sm_90a --check --remarks --kernel=attn_bwd %s 2>&1 | FileCheck %s --check-prefix=BWD
# RUN: %tl-run --device=cpu --target=sm_90a --check --schedule-seed=11 --kernel=attn_bwd -D is_causal=True %s | FileCheck %s --check-prefix=PASS
# RUN: %tl-run --device=cpu --target=sm_90a --check --kernel=attn_bwd -D block_N=64 -D dim=32 %s | FileCheck %s --check-prefix=PASS
# RUN: %tl-run --device=cpu --target=sm_90a --check --remarks --kernel=two_gemms %s 2>&1 | FileCheck %s --check-prefix=TIED
# RUN: %tl-run --device=cpu --target=sm_90a --check --remarks --kernel=two_gemms -D tie=False %s 2>&1 | FileCheck %s --check-prefix=SHB
# RUN: %tl-opt --target=sm_90a --emit=simt --kernel=attn_bwd %s | FileCheck %s --check-prefix=SIMT
# RUN: %tl-opt --target=sm_90a --emit=ptx --kernel=attn_bwd %s | FileCheck %s --check-prefix=PTX
#
# Some T.gemm of a kernel as wgmma and the others as mma.sync, outside the warp-specialized path
# (lib/Lower/Hopper/gemm_wgmma.c, docs/hopper.md "cp.async + wgmma"), checked on the CPU SIMT executor against
# the reference evaluator:
#  - attn_bwd: the main loop of TileLang's example_gqa_bwd.py (flashattn_bwd_atomic_add), reduced: Q·Kᵀ, dO·Vᵀ,
#    P·dO (rs), dS·Q (rs) as wgmma over two warpgroups (block_M 128), dSᵀ·K into dq (block_N 32 rows: not a
#    multiple of 64) as mma.sync reading K's wgmma image with ldmatrix; the f32 lse and Delta tiles keep the loop
#    off the warp-specialized path;
#  - two_gemms (tie=True): a T.Parallel loop reads the accumulators of a wgmma-able T.gemm and of one that is not: one
#    fragment would need two partitions, so every T.gemm stays mma.sync (the remark says why);
#  - two_gemms (tie=False): a T.gemm that cannot run as wgmma (32 rows) reads a B tile of one that can, with its A in
#    registers: it would be taken for a wgmma one, so every T.gemm stays mma.sync.
import tilelang
import tilelang.language as T

# BWD: remark: T.Pipelined loop takes the cp.async + wgmma path (4 of the kernel's 5 T.gemm as wgmma, the others mma.sync: a T.gemm's block_M is not a multiple of 64 that splits evenly over the warpgroups (threads / 128); not warp-specialized: a copied tile is not float16/bfloat16/float8_e4m3/float8_e5m2 (wgmma's input types))
# BWD: check: PASS
# PASS: check: PASS
# TIED: remark: T.Pipelined loop stays on the cp.async + mma.sync path: {{.*}} (T.gemm not as wgmma either: a fragment ties a T.gemm that can run as wgmma to one that cannot)
# TIED: check: PASS
# SHB: remark: T.Pipelined loop stays on the cp.async + mma.sync path: {{.*}} (T.gemm not as wgmma either: a T.gemm that cannot run as wgmma reads the tiles of one that can)
# SHB: check: PASS
# four wgmma T.gemm (two of them rs: P and dS in registers) and one mma.sync T.gemm (ldmatrix of the images)
# SIMT-COUNT-4: T.ptx_wgmma_commit()
# SIMT: T.ptx_ldmatrix
# PTX: wgmma.mma_async.sync.aligned
# PTX: mma.sync.aligned.m16n8k16


@tilelang.jit(out_idx=[])
def attn_bwd(seq_len=128, heads=2, dim=64, is_causal=False, block_M=128, block_N=32, threads=256, num_stages=2):
    scale = (1.0 / dim) ** 0.5 * 1.44269504
    sm_scale = (1.0 / dim) ** 0.5
    shape = [1, seq_len, heads, dim]
    dtype = "float16"
    accum_dtype = "float32"

    @T.prim_func
    def bwd(Q: T.Tensor(shape, dtype), K: T.Tensor(shape, dtype), V: T.Tensor(shape, dtype),
            dO: T.Tensor(shape, dtype), lse: T.Tensor([1, heads, seq_len], accum_dtype),
            Delta: T.Tensor([1, heads, seq_len], accum_dtype), dQ: T.Tensor(shape, accum_dtype),
            dK: T.Tensor(shape, dtype), dV: T.Tensor(shape, dtype)):
        with T.Kernel(heads, T.ceildiv(seq_len, block_M), 1, threads=threads) as (bx, by, bz):
            K_shared = T.alloc_shared([block_M, dim], dtype)
            dsT_shared = T.alloc_shared([block_M, block_N], dtype)
            q = T.alloc_shared([block_N, dim], dtype)
            V_shared = T.alloc_shared([block_M, dim], dtype)
            qkT = T.alloc_fragment([block_M, block_N], accum_dtype)
            dsT = T.alloc_fragment([block_M, block_N], accum_dtype)
            qkT_cast = T.alloc_fragment([block_M, block_N], dtype)
            dsT_cast = T.alloc_fragment([block_M, block_N], dtype)
            lse_shared = T.alloc_shared([block_N], accum_dtype)
            delta = T.alloc_shared([block_N], accum_dtype)
            do = T.alloc_shared([block_N, dim], dtype)
            dv = T.alloc_fragment([block_M, dim], accum_dtype)
            dk = T.alloc_fragment([block_M, dim], accum_dtype)
            dq = T.alloc_fragment([block_N, dim], accum_dtype)
            T.copy(K[bz, by * block_M:(by + 1) * block_M, bx, :], K_shared)
            T.copy(V[bz, by * block_M:(by + 1) * block_M, bx, :], V_shared)
            T.clear(dv)
            T.clear(dk)
            loop_st = T.floordiv(by * block_M, block_N) if is_causal else 0
            loop_ed = T.ceildiv(seq_len, block_N)
            for k in T.Pipelined(loop_st, loop_ed, num_stages=num_stages):
                T.copy(Q[bz, k * block_N:(k + 1) * block_N, bx, :], q)
                T.clear(qkT)
                T.gemm(K_shared, q, qkT, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                T.copy(lse[bz, bx, k * block_N:(k + 1) * block_N], lse_shared)
                for i, j in T.Parallel(block_M, block_N):
                    qkT[i, j] = T.exp2(qkT[i, j] * scale - lse_shared[j])
                if is_causal:
                    for i, j in T.Parallel(block_M, block_N):
                        qkT[i, j] = T.if_then_else(by * block_M + i <= k * block_N + j, qkT[i, j], 0)
                T.copy(dO[bz, k * block_N:(k + 1) * block_N, bx, :], do)
                T.clear(dsT)
                T.gemm(V_shared, do, dsT, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                T.copy(qkT, qkT_cast)
                T.gemm(qkT_cast, do, dv, policy=T.GemmWarpPolicy.FullRow)
                T.copy(Delta[bz, bx, k * block_N:(k + 1) * block_N], delta)
                for i, j in T.Parallel(block_M, block_N):
                    dsT_cast[i, j] = qkT[i, j] * (dsT[i, j] - delta[j]) * sm_scale
                T.gemm(dsT_cast, q, dk, policy=T.GemmWarpPolicy.FullRow)
                T.copy(dsT_cast, dsT_shared)
                T.clear(dq)
                T.gemm(dsT_shared, K_shared, dq, transpose_A=True)
                for i, j in T.Parallel(block_N, dim):
                    T.atomic_add(dQ[bz, k * block_N + i, bx, j], dq[i, j])
            T.copy(dv, dV[bz, by * block_M:(by + 1) * block_M, bx, :])
            T.copy(dk, dK[bz, by * block_M:(by + 1) * block_M, bx, :])

    return bwd


@tilelang.jit(out_idx=[2, 3])
def two_gemms(tie=True, M=128, N=64, K=64, threads=256):
    Dm = M if tie else 32
    # tie: c_wide's T.gemm has a 48-column A tile (96 bytes: no wgmma swizzle span) and a T.Parallel adds the
    # wgmma-able c_big into it; else: a 32-row T.gemm with A in registers reads B_s, the B tile of c_big's
    @T.prim_func
    def two(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32"),
            D: T.Tensor((Dm, N), "float32")):
        with T.Kernel(1, threads=threads) as bx:
            A_s = T.alloc_shared((M, 32), "float16")
            B_s = T.alloc_shared((32, N), "float16")
            A48 = T.alloc_shared((M, 48), "float16")
            B48 = T.alloc_shared((48, N), "float16")
            a_frag = T.alloc_fragment((32, 32), "float16")
            c_big = T.alloc_fragment((M, N), "float32")
            c_wide = T.alloc_fragment((M, N), "float32")
            c_small = T.alloc_fragment((32, N), "float32")
            T.clear(c_big)
            T.clear(c_wide)
            T.clear(c_small)
            for k in T.Pipelined(K // 32, num_stages=2):
                T.copy(A[0:M, k * 32:(k + 1) * 32], A_s)
                T.copy(B[k * 32:(k + 1) * 32, 0:N], B_s)
                T.gemm(A_s, B_s, c_big)
                if tie:
                    T.copy(A[0:M, 0:48], A48)
                    T.copy(B[0:48, 0:N], B48)
                    T.gemm(A48, B48, c_wide)
                    for i, j in T.Parallel(M, N):
                        c_wide[i, j] = c_wide[i, j] + c_big[i, j]
                else:
                    T.copy(A[0:32, k * 32:(k + 1) * 32], a_frag)
                    T.gemm(a_frag, B_s, c_small)
            T.copy(c_big, C)
            if tie:
                T.copy(c_wide, D)
            else:
                T.copy(c_small, D)

    return two
