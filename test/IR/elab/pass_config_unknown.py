# An unknown TileLang pass config is an error at its key; the ones that only
# switch off what this compiler never does are accepted.
# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: pass_config_unknown.py:[[@LINE+6]]:59: error: unsupported pass config 'tl.enable_magic'
# CHECK-NOT: error:
import tilelang
import tilelang.language as T


@tilelang.jit(pass_configs={"tl.disable_tma_lower": True, "tl.enable_magic": 1})
def kernel(N=128):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(128):
                A[i] = 0.0
    return main
