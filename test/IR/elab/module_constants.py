# A bare prim_func with module constants; -D overrides a module constant;
# T.dynamic("m, n") declares two symbols; T.func_attr sets out_idx.
# RUN: %tl-opt %s | FileCheck %s
# RUN: %tl-opt -D BLOCK=64 %s | FileCheck %s --check-prefix=B64
# RUN: %tl-opt %s | %tl-opt - | FileCheck %s
# CHECK: m = T.dynamic("m")
# CHECK-NEXT: n = T.dynamic("n")
# CHECK: def main(A: T.Tensor((m, n), "float32"), B: T.Tensor((m, n), "float32"), scale: T.float32):
# CHECK-NEXT: T.func_attr({"out_idx": [1]})
# CHECK-NEXT: with T.Kernel(T.ceildiv(m, 128), threads=128) as bx:
# B64: with T.Kernel(T.ceildiv(m, 64), threads=64) as bx:
import math

import tilelang.language as T
import torch

BLOCK = 128
m, n = T.dynamic("m, n")
unused_host_value = torch.randn(4, 4)


@T.prim_func
def main(A: T.Tensor((m, n), "float32"), B: T.Tensor((m, n), "float32"), scale: T.float32):
    T.func_attr({"out_idx": [-2]})
    with T.Kernel(T.ceildiv(m, BLOCK), threads=BLOCK) as bx:
        for j in T.serial(n):
            for i in T.Parallel(BLOCK):
                B[bx * BLOCK + i, j] = A[bx * BLOCK + i, j] * scale * math.sqrt(4.0)


if __name__ == "__main__":
    print(main)
