# The pass configs in T.func_attr (as the canonical tile IR prints them) read
# back as they print, beside fast math.
# RUN: %tl-opt %s | FileCheck %s
# RUN: %tl-opt %s | %tl-opt - | FileCheck %s
# CHECK: T.func_attr({"out_idx": [1], "tl.enable_fast_math": True, "tl.disable_tma_lower": True})
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    T.func_attr({"tl.disable_tma_lower": True, "out_idx": [1], "tl.disable_wgmma": False,
                 "tl.enable_fast_math": 1})
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(128):
            B[i] = A[i] * 2.0
