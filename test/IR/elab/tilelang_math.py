# tilelang.cdiv / tilelang.math.cdiv and tilelang.next_power_of_2 /
# tilelang.math.next_power_of_2 are compile-time integer functions (TileLang's
# tilelang/math: (a + b - 1) // b and 1 << (x - 1).bit_length()); the values
# below are Python's. A non-constant argument is a located error.
# RUN: %tl-opt --kernel=k -D n=65 %s | FileCheck %s --check-prefix=N65
# RUN: %tl-opt --kernel=k -D n=1 %s | FileCheck %s --check-prefix=N1
# RUN: %tl-opt --kernel=k -D n=200 %s | FileCheck %s --check-prefix=N200
# RUN: not %tl-opt --kernel=bad %s 2>&1 | FileCheck %s --check-prefix=BAD
# N65: A: T.Tensor((128,), "float32")
# N65: A[bx * 128 + i] = 74.0
# N1: A: T.Tensor((1,), "float32")
# N1: A[bx + i] = 3.0
# N200: T.Kernel(2, threads=128)
# N200: A[bx * 128 + i] = 285.0
# BAD: tilelang_math.py:[[@LINE+24]]:46: error: tilelang.next_power_of_2 expects an integer constant up to 2**62, got float 2.5
import tilelang
import tilelang.language as T


@tilelang.jit
def k(n=100):
    block = min(128, tilelang.math.next_power_of_2(n))
    nb = tilelang.cdiv(n, block)

    @T.prim_func
    def main(A: T.Tensor((nb * block,), "float32")):
        with T.Kernel(nb, threads=block) as bx:
            for i in T.Parallel(block):
                A[bx * block + i] = tilelang.next_power_of_2(n - 1) + tilelang.math.cdiv(n, 7) + i * 0

    return main


@tilelang.jit
def bad():
    @T.prim_func
    def main(A: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=4) as bx:
            A[bx] = tilelang.next_power_of_2(2.5)

    return main
