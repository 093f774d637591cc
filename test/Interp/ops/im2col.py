# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check --kernel=im2col_tiles %s > %t
# RUN: %tl-run --device=cpu --check --kernel=gather_direct %s >> %t
# RUN: FileCheck %s < %t
# RUN: %tl-run --device=cpu --check --kernel=im2col_tiles -D S=2 -D D=2 -D P=2 -D block_K=16 %s > %t2
# RUN: %tl-run --device=cpu --check --kernel=gather_direct -D S=2 -D D=2 -D P=2 %s >> %t2
# RUN: FileCheck %s < %t2
# RUN: %tl-opt --kernel=im2col_tiles %s | FileCheck %s --check-prefix=TIR
# T.im2col (TileLang's copy_op.py; the tile meaning of its SIMT lowering):
# im2col_tiles builds the (N*OH*OW, K*K*C) im2col matrix of an int32 NHWC
# image tile by tile with T.im2col (rows in blocks of block_M by nhw_step,
# columns in blocks of block_K by c_step); gather_direct writes the same
# matrix from explicit loops over (n, oh, ow) and (kh, kw, c) with the
# padding test written out.  The two print the same sums (FileCheck variables:
# the image is tl-run's seed-0 integers, so a wrong tap or pixel changes
# them), and each passes --check.  Also with stride 2, dilation 2, pad 2.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def im2col_tiles(N=2, H=9, W=7, C=4, K=3, S=1, D=1, P=1, block_M=32, block_K=12):
    OH = (H + 2 * P - D * (K - 1) - 1) // S + 1
    OW = (W + 2 * P - D * (K - 1) - 1) // S + 1

    @T.prim_func
    def tiles(img: T.Tensor((N, H, W, C), "int32"), col: T.Tensor((N * OH * OW, K * K * C), "int32")):
        with T.Kernel(T.ceildiv(K * K * C, block_K), T.ceildiv(N * OH * OW, block_M), threads=64) as (bx, by):
            tile = T.alloc_shared((block_M, block_K), "int32")
            T.im2col(img, tile, by, bx, K, S, D, P)
            T.copy(tile, col[by * block_M, bx * block_K])

    return tiles


@tilelang.jit(out_idx=-1)
def gather_direct(N=2, H=9, W=7, C=4, K=3, S=1, D=1, P=1):
    OH = (H + 2 * P - D * (K - 1) - 1) // S + 1
    OW = (W + 2 * P - D * (K - 1) - 1) // S + 1

    @T.prim_func
    def direct(img: T.Tensor((N, H, W, C), "int32"), col: T.Tensor((N * OH * OW, K * K * C), "int32")):
        with T.Kernel(N, OH, threads=64) as (n, oh):
            for ow, kh, kw, c in T.Parallel(OW, K, K, C):
                ih = oh * S + kh * D - P
                iw = ow * S + kw * D - P
                row = (n * OH + oh) * OW + ow
                tap = (kh * K + kw) * C + c
                if ih >= 0 and ih < H and iw >= 0 and iw < W:
                    col[row, tap] = img[n, ih, iw, c]
                else:
                    col[row, tap] = 0

    return direct

# CHECK: output col {{.*}} sum=[[SUM:[^ ]+]] abs_sum=[[ABS:[^ ]+]]
# CHECK-NEXT: check: PASS
# CHECK-NEXT: output col {{.*}} sum=[[SUM]] abs_sum=[[ABS]]
# CHECK-NEXT: check: PASS
# TIR: for ic_i0, ic_i1 in T.Parallel(32, 12):
# TIR: tile[ic_i0, ic_i1] = img[(by * 32 + ic_i0) // 63,
# TIR: else:
# TIR-NEXT: tile[ic_i0, ic_i1] = 0
