# RUN: %tl-opt --analyze -D N=2 -D C=64 -D H=16 -D W=16 -D F=128 -D K=3 -D S=1 -D D=1 -D P=1 -D block_M=64 -D block_N=128 -D block_K=32 -D num_stages=3 -D threads=256 %s | FileCheck %s
# RUN: %tl-opt --analyze -D N=64 -D C=256 -D H=512 -D W=512 -D F=512 -D K=3 -D S=1 -D D=1 -D P=1 -D block_M=64 -D block_N=128 -D block_K=32 -D num_stages=3 -D threads=256 %s | FileCheck %s --check-prefix=BIG
# The work analysis of the eager-style convolution of TileLang's
# examples/analyze/example_conv_analyze.py (T.im2col into shared memory, the
# filter and the output through T.Tensor views of the parameters, whose
# copies become element loops: their global elements count one by one).
# N=2, C=64, 16x16, F=128, 3x3, stride 1, padding 1: the GEMM is
# (N*OH*OW = 512) x (KH*KW*C = 576) by 576 x (F = 128); grid 1 x 8 blocks of
# 64 x 128, 576 / 32 = 18 iterations.
#   flops: 2*512*128*576 = 75497472
#   reads: per iteration the 64x32 im2col tile (4096 bytes: each element is
#          a global load in one branch of the padding test, a zero in the
#          other; the larger branch counts) and the 32x128 filter tile (8192),
#          x 18 x 8 = 1769472
#   writes: the output, 512*128*2 = 131072
# CHECK: flops=75497472
# CHECK-NEXT: global_bytes=1900544
# CHECK-NEXT: global_read_bytes=1769472
# CHECK-NEXT: global_write_bytes=131072
# CHECK-NEXT: gemms=144
# CHECK-NEXT: blocks=8
# The example's own sizes: a grid of 4 x 262144 blocks (over the launch limit of
# the y axis, refused when compiling; counted here as TileLang's Analyzer counts it):
# 2 * (64*512*512) * 512 * 2304 = 39582418599936 flops.
# BIG: flops=39582418599936
# BIG: gemms=75497472
# BIG-NEXT: blocks=1048576
import tilelang
import tilelang.language as T


@tilelang.jit
def kernel(data, kernel, S, D, P, block_M, block_N, block_K, num_stages, threads, dtype=T.float16, accum_dtype=T.float32):
    N, C, H, W, F, K = T.const("N, C, H, W, F, K")
    KH, KW = K, K
    OH = (H + 2 * P - D * (K - 1) - 1) // S + 1
    OW = (W + 2 * P - D * (K - 1) - 1) // S + 1
    dtype = T.float16
    accum_dtype = T.float32

    data: T.Tensor((N, H, W, C), dtype)
    kernel: T.Tensor((KH, KW, C, F), dtype)
    out = T.empty((N, OH, OW, F), dtype)

    with T.Kernel(T.ceildiv(F, block_N), T.ceildiv(N * OH * OW, block_M), threads=threads) as (bx, by):
        data_shared = T.alloc_shared((block_M, block_K), dtype)
        kernel_shared = T.alloc_shared((block_K, block_N), dtype)
        out_local = T.alloc_fragment((block_M, block_N), accum_dtype)
        out_shared = T.alloc_shared((block_M, block_N), dtype)

        kernel_flat = T.Tensor((KH * KW * C, F), dtype, kernel.data)
        out_flat = T.Tensor((N * OH * OW, F), dtype, out.data)

        T.clear(out_local)
        for k_iter in T.Pipelined(T.ceildiv(KH * KW * C, block_K), num_stages=num_stages):
            T.im2col(data, data_shared, by, k_iter, KH, S, D, P)
            T.copy(kernel_flat[k_iter * block_K, bx * block_N], kernel_shared)
            T.gemm(data_shared, kernel_shared, out_local)

        T.copy(out_local, out_shared)
        T.copy(out_shared, out_flat[by * block_M, bx * block_N])

    return out
