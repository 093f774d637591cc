# GEMM whose epilogue stages C through a shared tile, the form of TileLang's
# autotuned GEMM example (B stored N x K, T.use_swizzle, C_local -> C_shared ->
# C), for the Hopper path's epilogue forms (test/Interp/check_hopper_gemm.sh,
# test/NVPTX/hopper_gemm_ptx.sh, scripts/sanitize-hopper.sh, and bench_gemm's
# TL_BENCH_KERNEL=c_shared).  Factory parameters as gemm_general.py's
# (block_M .. swizzle_panel, dtype, out_dtype, trans_A, trans_B; policy is
# accepted and passed to T.gemm), swizzle_panel > 0 giving
# T.use_swizzle(panel_size=swizzle_panel, enable=True), else enable=False,
# and the epilogue:
#   "copy":  T.copy(C_local, C_shared); T.copy(C_shared, C[..])
#   "relu":  the accumulator clamped at 0 in the fragment first, then "copy"
#   "scale": C_shared[i, j] = cast(max(alpha * C_local[i, j], 0)) by a
#            T.Parallel loop, then T.copy(C_shared, C[..])
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def matmul(M=1024, N=1024, K=1024, block_M=128, block_N=256, block_K=64, dtype="float16", out_dtype="float16",
           accum_dtype="float32", num_stages=3, threads=256, trans_A=False, trans_B=True, policy=0,
           swizzle_panel=10, epilogue="copy", alpha=0.5):
    a_shape, a_tile = (K, M), (block_K, block_M)
    if not trans_A:
        a_shape, a_tile = (M, K), (block_M, block_K)
    b_shape, b_tile = (N, K), (block_N, block_K)
    if not trans_B:
        b_shape, b_tile = (K, N), (block_K, block_N)
    panel = 10
    if swizzle_panel > 0:
        panel = swizzle_panel

    @T.prim_func
    def main(A: T.Tensor(a_shape, dtype), B: T.Tensor(b_shape, dtype), C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_s = T.alloc_shared(a_tile, dtype)
            B_s = T.alloc_shared(b_tile, dtype)
            acc = T.alloc_fragment((block_M, block_N), accum_dtype)
            C_s = T.alloc_shared((block_M, block_N), out_dtype)
            T.use_swizzle(panel_size=panel, enable=swizzle_panel > 0)
            T.clear(acc)
            for kt in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                if trans_A:
                    T.copy(A[kt * block_K, by * block_M], A_s)
                else:
                    T.copy(A[by * block_M, kt * block_K], A_s)
                if trans_B:
                    T.copy(B[bx * block_N, kt * block_K], B_s)
                else:
                    T.copy(B[kt * block_K, bx * block_N], B_s)
                if policy == 1:
                    T.gemm(A_s, B_s, acc, transpose_A=trans_A, transpose_B=trans_B, policy=T.GemmWarpPolicy.FullRow)
                elif policy == 2:
                    T.gemm(A_s, B_s, acc, transpose_A=trans_A, transpose_B=trans_B, policy=T.GemmWarpPolicy.FullCol)
                else:
                    T.gemm(A_s, B_s, acc, transpose_A=trans_A, transpose_B=trans_B)
            if epilogue == "scale":
                for i, j in T.Parallel(block_M, block_N):
                    C_s[i, j] = T.cast(T.max(acc[i, j] * alpha, 0), out_dtype)
            else:
                if epilogue == "relu":
                    for i, j in T.Parallel(block_M, block_N):
                        acc[i, j] = T.max(acc[i, j], 0)
                T.copy(acc, C_s)
            T.copy(C_s, C[by * block_M, bx * block_N])

    return main
