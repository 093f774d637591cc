# Reductions along a dim other than the last, and the batch= keyword
# (issue 14): written after TileLang's split-KV combine (flash decoding,
# TileLang #310) and its reduce tests.
#   kind="combine": lse (splits, M) per block reduced with T.reduce_max along
#     dim 0, then log2(sum_k exp2(lse[k, i] - max_i)) + max_i per row i;
#   kind="cols": B[j] = op over i of A[i, j] for an (M, N) tile (dim 0);
#   kind="mid": C[b, j] = op over s of A[b, s, j] for a (2, 8, 16) tile
#     (dim 1; the destination kept as (2, 1, 16) when keep=True);
#   kind="gemm_cols": the column sums (op="sum") or maxima of a T.gemm
#     accumulator (64, 64), reduced along dim 0;
#   batch: passed to every T.reduce_* (a scheduling hint: same result).
# src/dst: "fragment" or "shared".
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=None)
def reduce_dims(kind="cols", M=64, N=64, splits=8, threads=128, op="sum", dtype="float32", src="fragment",
                dst="fragment", batch=1, keep=False, clear=True):

    @T.prim_func
    def combine(L: T.Tensor((4, splits, M), dtype), O: T.Tensor((4, M), dtype)):
        with T.Kernel(4, threads=threads) as bz:
            if src == "shared":
                lse = T.alloc_shared((splits, M), dtype)
            else:
                lse = T.alloc_fragment((splits, M), dtype)
            lse_max = T.alloc_fragment((M,), dtype)
            lse_sum = T.alloc_fragment((M,), dtype)
            T.copy(L[bz, 0, 0], lse)
            T.reduce_max(lse, lse_max, dim=0, clear=True, batch=batch)
            T.clear(lse_sum)
            for k in T.serial(splits):
                for i in T.Parallel(M):
                    lse_sum[i] += T.exp2(L[bz, k, i] - lse_max[i])
            for i in T.Parallel(M):
                lse_sum[i] = T.log2(lse_sum[i]) + lse_max[i]
            T.copy(lse_sum, O[bz, 0])

    @T.prim_func
    def cols(A: T.Tensor((M, N), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=threads) as bx:
            if src == "shared":
                a = T.alloc_shared((M, N), dtype)
            else:
                a = T.alloc_fragment((M, N), dtype)
            if dst == "shared":
                b = T.alloc_shared((N,), dtype)
            else:
                b = T.alloc_fragment((N,), dtype)
            T.copy(A, a)
            if not clear:
                T.copy(B, b)
            if op == "sum":
                T.reduce_sum(a, b, dim=0, clear=clear, batch=batch)
            elif op == "max":
                T.reduce_max(a, b, dim=0, clear=clear, batch=batch)
            elif op == "min":
                T.reduce_min(a, b, dim=0, clear=clear, batch=batch)
            elif op == "abssum":
                T.reduce_abssum(a, b, dim=0, clear=clear, batch=batch)
            else:
                T.reduce_absmax(a, b, dim=0, clear=clear, batch=batch)
            T.copy(b, B)

    @T.prim_func
    def mid(A: T.Tensor((16, 8, 16), dtype), C: T.Tensor((16, 16), dtype)):
        with T.Kernel(8, threads=threads) as bx:
            if src == "shared":
                a = T.alloc_shared((2, 8, 16), dtype)
            else:
                a = T.alloc_fragment((2, 8, 16), dtype)
            if dst == "shared":
                c = T.alloc_shared((2, 16), dtype)
            else:
                c = T.alloc_fragment((2, 16), dtype)
            T.copy(A[bx * 2, 0, 0], a)
            if op == "sum":
                T.reduce_sum(a, c, dim=1, clear=clear, batch=batch)
            elif op == "max":
                T.reduce_max(a, c, dim=1, clear=clear, batch=batch)
            elif op == "min":
                T.reduce_min(a, c, dim=1, clear=clear, batch=batch)
            elif op == "abssum":
                T.reduce_abssum(a, c, dim=1, clear=clear, batch=batch)
            else:
                T.reduce_absmax(a, c, dim=1, clear=clear, batch=batch)
            T.copy(c, C[bx * 2, 0])

    @T.prim_func
    def mid_keep(A: T.Tensor((16, 8, 16), dtype), C: T.Tensor((16, 1, 16), dtype)):
        with T.Kernel(8, threads=threads) as bx:
            if src == "shared":
                a = T.alloc_shared((2, 8, 16), dtype)
            else:
                a = T.alloc_fragment((2, 8, 16), dtype)
            c = T.alloc_shared((2, 1, 16), dtype)
            T.copy(A[bx * 2, 0, 0], a)
            if op == "sum":
                T.reduce_sum(a, c, dim=1, clear=clear, batch=batch)
            elif op == "max":
                T.reduce_max(a, c, dim=1, clear=clear, batch=batch)
            elif op == "min":
                T.reduce_min(a, c, dim=1, clear=clear, batch=batch)
            elif op == "abssum":
                T.reduce_abssum(a, c, dim=1, clear=clear, batch=batch)
            else:
                T.reduce_absmax(a, c, dim=1, clear=clear, batch=batch)
            T.copy(c, C[bx * 2, 0, 0])

    @T.prim_func
    def gemm_cols(A: T.Tensor((64, 32), "float16"), Bm: T.Tensor((32, 64), "float16"), C: T.Tensor((64,), dtype)):
        with T.Kernel(1, threads=threads):
            A_s = T.alloc_shared((64, 32), "float16")
            B_s = T.alloc_shared((32, 64), "float16")
            C_l = T.alloc_fragment((64, 64), "float32")
            c = T.alloc_fragment((64,), dtype)
            T.copy(A, A_s)
            T.copy(Bm, B_s)
            T.gemm(A_s, B_s, C_l, clear_accum=True)
            if op == "sum":
                T.reduce_sum(C_l, c, dim=0, batch=batch)
            else:
                T.reduce_max(C_l, c, dim=0, batch=batch)
            T.copy(c, C)

    if kind == "combine":
        return combine
    if kind == "gemm_cols":
        return gemm_cols
    if kind == "mid":
        return mid_keep if keep else mid
    return cols
