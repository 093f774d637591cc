# FlashAttention forward for benchmarks/tilelang_side.py in the TileLang language (compiled unchanged by the
# real TileLang and by tilelang_ptx): Q, K, V and O are float16, (batch, seq_len, heads, dim) -- layout
# "bshd", that of TileLang's documented attention example -- or (batch, heads, seq_len, dim) ("bhsd");
# seq_len a multiple of block_N; one block per (query tile, head, batch); an online softmax in
# base 2 (the scale carries log2(e)); P is cast to float16 in registers for the second gemm; optional causal
# mask (the key loop stops at the query tile's diagonal).
import tilelang
import tilelang.language as T

LOG2E = 1.44269504


@tilelang.jit(out_idx=[3])
def flashattn(batch, heads, seq_len, dim, is_causal, block_M=128, block_N=128, num_stages=2, threads=256,
              layout="bshd"):
    scale = (1.0 / dim) ** 0.5 * LOG2E
    bshd = layout == "bshd"
    shape = [batch, seq_len, heads, dim] if bshd else [batch, heads, seq_len, dim]
    dtype = "float16"
    accum_dtype = "float"

    @T.prim_func
    def mha_fwd(
        Q: T.Tensor(shape, dtype),
        K: T.Tensor(shape, dtype),
        V: T.Tensor(shape, dtype),
        O: T.Tensor(shape, dtype),
    ):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=threads) as (bx, by, bz):
            q_tile = T.alloc_shared([block_M, dim], dtype)
            k_tile = T.alloc_shared([block_N, dim], dtype)
            v_tile = T.alloc_shared([block_N, dim], dtype)
            o_tile = T.alloc_shared([block_M, dim], dtype)
            s = T.alloc_fragment([block_M, block_N], accum_dtype)
            p = T.alloc_fragment([block_M, block_N], dtype)
            o = T.alloc_fragment([block_M, dim], accum_dtype)
            m = T.alloc_fragment([block_M], accum_dtype)
            m_prev = T.alloc_fragment([block_M], accum_dtype)
            rescale = T.alloc_fragment([block_M], accum_dtype)
            row_sum = T.alloc_fragment([block_M], accum_dtype)
            denom = T.alloc_fragment([block_M], accum_dtype)

            if bshd:
                T.copy(Q[bz, bx * block_M:(bx + 1) * block_M, by, :], q_tile)
            else:
                T.copy(Q[bz, by, bx * block_M:(bx + 1) * block_M, :], q_tile)
            T.fill(o, 0)
            T.fill(denom, 0)
            T.fill(m, -T.infinity(accum_dtype))

            n_kv = (T.min(T.ceildiv(seq_len, block_N), T.ceildiv((bx + 1) * block_M, block_N))
                    if is_causal else T.ceildiv(seq_len, block_N))

            for kb in T.Pipelined(n_kv, num_stages=num_stages):
                if bshd:
                    T.copy(K[bz, kb * block_N:(kb + 1) * block_N, by, :], k_tile)
                else:
                    T.copy(K[bz, by, kb * block_N:(kb + 1) * block_N, :], k_tile)
                if is_causal:
                    for i, j in T.Parallel(block_M, block_N):
                        s[i, j] = T.if_then_else(bx * block_M + i >= kb * block_N + j, 0, -T.infinity(accum_dtype))
                else:
                    T.clear(s)
                T.gemm(q_tile, k_tile, s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)

                T.copy(m, m_prev)
                T.reduce_max(s, m, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    rescale[i] = T.exp2(m_prev[i] * scale - m[i] * scale)
                for i, j in T.Parallel(block_M, dim):
                    o[i, j] *= rescale[i]
                for i, j in T.Parallel(block_M, block_N):
                    s[i, j] = T.exp2(s[i, j] * scale - m[i] * scale)
                T.reduce_sum(s, row_sum, dim=1)
                for i in T.Parallel(block_M):
                    denom[i] = denom[i] * rescale[i] + row_sum[i]
                T.copy(s, p)

                if bshd:
                    T.copy(V[bz, kb * block_N:(kb + 1) * block_N, by, :], v_tile)
                else:
                    T.copy(V[bz, by, kb * block_N:(kb + 1) * block_N, :], v_tile)
                T.gemm(p, v_tile, o, policy=T.GemmWarpPolicy.FullRow)

            for i, j in T.Parallel(block_M, dim):
                o[i, j] /= denom[i]
            T.copy(o, o_tile)
            if bshd:
                T.copy(o_tile, O[bz, bx * block_M:(bx + 1) * block_M, by, :])
            else:
                T.copy(o_tile, O[bz, by, bx * block_M:(bx + 1) * block_M, :])

    return mha_fwd
