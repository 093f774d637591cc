# RUN: not %tl-opt -D dtype=float19 %s 2>&1 | FileCheck %s
# CHECK: {{.*}}define_bad_dtype.py:12:32: error: unknown dtype 'float19'
# CHECK: <command line>: note: 'dtype' was set by -D dtype=float19
# CHECK-NOT: error:
import tilelang
import tilelang.language as T


@tilelang.jit
def kernel(N=1024, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype)):
        with T.Kernel(N // 128, threads=128) as bx:
            for i in T.Parallel(128):
                A[bx * 128 + i] = 0
    return main
