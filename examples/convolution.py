# 2-D convolution as an implicit GEMM: the output pixels (n, oh, ow) are the
# rows of a GEMM and the filter taps (kh, kw, c) its reduction dimension.
# Each K step gathers one (block_M, block_K) tile of the im2col matrix of
# the NHWC input with T.im2col (taps outside the padded image read as 0) and
# one (block_K, block_N) tile of the (KH*KW*C, F) filter matrix, which is the
# KHWCF filter seen through T.reshape, and multiplies them with T.gemm; the
# output tile goes to the NHWF output through another T.reshape.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def convolution(N=16, C=64, H=32, W=32, F=64, K=3, S=1, D=1, P=1, block_M=64, block_N=64, block_K=32,
                num_stages=2, threads=128, dtype="float16", accum_dtype="float32"):
    OH = (H + 2 * P - D * (K - 1) - 1) // S + 1
    OW = (W + 2 * P - D * (K - 1) - 1) // S + 1

    @T.prim_func
    def conv(data: T.Tensor((N, H, W, C), dtype), weight: T.Tensor((K, K, C, F), dtype),
             out: T.Tensor((N, OH, OW, F), dtype)):
        with T.Kernel(T.ceildiv(F, block_N), T.ceildiv(N * OH * OW, block_M), threads=threads) as (bx, by):
            col_shared = T.alloc_shared((block_M, block_K), dtype)
            weight_shared = T.alloc_shared((block_K, block_N), dtype)
            acc = T.alloc_fragment((block_M, block_N), accum_dtype)
            out_shared = T.alloc_shared((block_M, block_N), dtype)
            weight_2d = T.reshape(weight, [K * K * C, F])
            out_2d = T.reshape(out, [N * OH * OW, F])
            T.clear(acc)
            for ko in T.Pipelined(T.ceildiv(K * K * C, block_K), num_stages=num_stages):
                T.im2col(data, col_shared, by, ko, K, S, D, P)
                T.copy(weight_2d[ko * block_K, bx * block_N], weight_shared)
                T.gemm(col_shared, weight_shared, acc)
            T.copy(acc, out_shared)
            T.copy(out_shared, out_2d[by * block_M, bx * block_N])

    return conv
