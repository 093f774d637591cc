# TileLang's pass configs tl.disable_wgmma, tl.disable_tma_lower and
# tl.disable_warp_specialized on the jit decorator are accepted like
# tl.enable_fast_math: they become function attributes of the canonical tile
# IR (only the true ones, in that order), read back the same from T.func_attr,
# and reach lowering without changing it yet (the SIMT IR keeps them).
# RUN: %tl-opt %s | FileCheck %s --check-prefix=TIR
# RUN: %tl-opt %s | %tl-opt - | FileCheck %s --check-prefix=TIR
# RUN: %tl-opt --emit=simt --target=sm_90a %s | FileCheck %s --check-prefix=TIR
# RUN: %tl-opt -D tma=False %s | FileCheck %s --check-prefix=NOTMA
# RUN: %tl-opt -D tma=False -D wgmma=0 -D ws=False %s | FileCheck %s --check-prefix=NONE
# TIR: T.func_attr({"out_idx": [1], "tl.disable_wgmma": True, "tl.disable_tma_lower": True, "tl.disable_warp_specialized": True})
# NOTMA: T.func_attr({"out_idx": [1], "tl.disable_wgmma": True, "tl.disable_warp_specialized": True})
# NONE: T.func_attr({"out_idx": [1]})
import tilelang
import tilelang.language as T

tma = True
wgmma = 1
ws = True


@tilelang.jit(out_idx=[1], pass_configs={"tl.disable_warp_specialized": ws, "tl.disable_tma_lower": tma,
                                         "tl.disable_wgmma": wgmma})
def kernel(N=1024):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
            for i in T.Parallel(128):
                B[bx * 128 + i] = A[bx * 128 + i] + 1.0
    return main
