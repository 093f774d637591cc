# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check --target=sm_90a %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --target=sm_89 -D dtype=float8_e5m2 -D scale=80000.0 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --target=sm_90a -D src=float16 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --target=sm_90a -D src=bfloat16 -D dtype=float8_e5m2 %s | FileCheck %s
# RUN: %tl-opt --emit=ptx --target=sm_90a %s | FileCheck %s --check-prefix=PTX
# RUN: not %tl-opt --emit=ptx --target=sm_80 %s 2>&1 | FileCheck %s --check-prefix=SM80
# CHECK: check: PASS
# PTX: cvt.rn.satfinite.e4m3x2.f32
# PTX: cvt.rn.f16x2.e4m3x2
# SM80: fp8_cast.py:[[@LINE+18]]:{{[0-9]+}}: error: conversion from float32 to float8_e4m3 needs sm_89 or newer
# float8 conversions in kernels (issue 14): Y = fp8(X * scale) and Z = float32(Y),
# with dtype float8_e4m3 or float8_e5m2: round to nearest even, saturate beyond
# the largest finite (448 / 57344), exact back to float32.  X * scale spans the
# whole range, subnormals and the saturating magnitudes included.  On the GPU
# (sm_89+) cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 and cvt.rn.f16x2.{e4m3x2,e5m2x2};
# the CPU models round as tl_fp8_encode.
#   tl-run --device=cpu --check --target=sm_90a test/Interp/ops/fp8_cast.py
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1, 2])
def fp8_cast(M=256, N=128, block_M=32, scale=600.0, dtype="float8_e4m3", src="float32", threads=128):
    @T.prim_func
    def main(X: T.Tensor((M, N), src), Y: T.Tensor((M, N), dtype), Z: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            for i, j in T.Parallel(block_M, N):
                Y[bx * block_M + i, j] = T.cast(X[bx * block_M + i, j] * scale, dtype)
            for i, j in T.Parallel(block_M, N):
                Z[bx * block_M + i, j] = T.cast(T.cast(X[bx * block_M + i, j] * scale, dtype), "float32")

    return main
