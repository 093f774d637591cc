# TileLang's pass config "tl.enable_fast_math" on the jit decorator becomes a
# function attribute of the canonical tile IR, which reads back the same; the
# PTX then contracts a*b+c into fma and uses ex2.approx.ftz for T.exp2, while
# the same kernel without it keeps mul and add apart and uses libdevice's
# exp2f (ex2.approx.f32, subnormals kept).
# RUN: %tl-opt %s | FileCheck %s --check-prefix=TIR
# RUN: %tl-opt %s | %tl-opt - | FileCheck %s --check-prefix=TIR
# RUN: %tl-opt --emit=ptx --target=sm_80 %s | FileCheck %s --check-prefix=FAST
# RUN: %tl-opt --emit=ptx --target=sm_80 -D fast=False %s | FileCheck %s --check-prefix=EXACT
# TIR: T.func_attr({"out_idx": [1], "tl.enable_fast_math": True})
# FAST: fma.rn.f32
# FAST: ex2.approx.ftz.f32
# FAST-NOT: ex2.approx.f32
# EXACT-NOT: fma.rn.f32
# EXACT-NOT: ex2.approx.ftz.f32
# EXACT: mul.rn.f32
# EXACT: add.rn.f32
import tilelang
import tilelang.language as T

fast = True


@tilelang.jit(out_idx=[1], pass_configs={"tl.enable_fast_math": fast})
def kernel(N=1024, scale=1.4426950408889634):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
            for i in T.Parallel(128):
                B[bx * 128 + i] = T.exp2(A[bx * 128 + i] * scale - 1.5) + A[bx * 128 + i]
    return main
