# RUN: %tl-opt --passes=check-supported %s > %t.out
# RUN: %tl-opt %s | diff - %t.out
# RUN: not %tl-opt --passes=check-supported -D nested=1 %s 2>&1 | FileCheck %s --check-prefix=ERR
# Pass "check-supported" (lib/Lower/check_supported.c) alone: a kernel made
# of what the pipeline lowers passes through unchanged (the output is the
# parsed tile IR); a T.Parallel nested in a T.Parallel is reported at its
# own location, and nothing is printed.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def kernel(nested=0):
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128) as bx:
            F = T.alloc_fragment((64, 64), "float32")
            if nested:
                for i in T.Parallel(64):
                    for j in T.Parallel(64):
                        F[i, j] = F[i, j] * 2.0
            else:
                for i, j in T.Parallel(64, 64):
                    F[i, j] = F[i, j] * 2.0
            T.copy(F, C)

    return main

# ERR: check-supported.py:[[@LINE-9]]:21: error: T.Parallel nested in a T.Parallel is not lowered yet
# ERR-NOT: error:
