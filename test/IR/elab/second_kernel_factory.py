# RUN: %tl-opt %s | FileCheck %s
# RUN: %tl-opt --emit=simt %s | FileCheck %s --check-prefix=SIMT
# RUN: %tl-opt %s | %tl-opt | FileCheck %s
# RUN: not %tl-opt --emit=simt %S/Inputs/multi_kernel_errors.py 2>&1 | FileCheck %s --check-prefix=ERR
# RUN: %tl-opt --emit=simt %S/Inputs/multi_kernel_global.py 2>&1 | FileCheck %s --check-prefix=GLOBAL
# Two T.Kernel scopes in a factory's prim_func: the tile IR keeps both in the
# one prim_func, in order; lowering (split-kernels) makes one function per
# scope, the second named main_kernel_1 with the same parameters.
# CHECK: def main(A: T.Tensor((128,), "float32")):
# CHECK-NEXT: with T.Kernel(1, threads=128) as bx:
# CHECK-NEXT: A[bx] = 0.0
# CHECK-NEXT: with T.Kernel(1, threads=64) as bx:
# CHECK-NEXT: A[bx + 1] = 1.0
# SIMT: def main(A: T.Tensor((128,), "float32")):
# SIMT: with T.Kernel(1, threads=128) as bx:
# SIMT: def main_kernel_1(A: T.Tensor((128,), "float32")):
# SIMT: with T.Kernel(1, threads=64) as bx:
# ERR: multi_kernel_errors.py:9:5: error: a prim_func with several T.Kernel scopes holds nothing else at its top level
# A T.alloc_global of one scope is a workspace of every stage (the same buffers, in order):
# GLOBAL: def main(
# GLOBAL: C = T.alloc_global((128,), "float32")
# GLOBAL: def main_kernel_1(
# GLOBAL-NEXT: T.func_attr
# GLOBAL-NEXT: with T.Kernel(1, threads=128) as bx:
# GLOBAL-NEXT: C = T.alloc_global((128,), "float32")
# GLOBAL-NOT: error
import tilelang
import tilelang.language as T


@tilelang.jit
def kernel(N=128):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A[bx] = 0.0
        with T.Kernel(1, threads=64) as bx:
            A[bx + 1] = 1.0
    return main
