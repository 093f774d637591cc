# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check --dim n=1,7,8,100 %s | FileCheck %s
# RUN: %tl-opt %s | FileCheck %s --check-prefix=TIR
# T.align_up(x, y) = T.ceildiv(x, y) * y (TileLang's tilelang/language/tir/ir.py):
# folded on constants (the shared tile of align_up(20, 16) = 32 elements), an
# expression on the dynamic n.  Out[i] = align_up(i, 8) + align_up(n, 4) for
# i < n, checked against the reference evaluator; the first element of each
# run's sum is sum(align_up(i, 8) for i < n) + n * align_up(n, 4), worked by hand.
import tilelang
import tilelang.language as T

n = T.dynamic("n")


@tilelang.jit(out_idx=-1)
def align_up_kernel(block=T.align_up(20, 16)):
    @T.prim_func
    def main(A: T.Tensor((n,), "int32"), Out: T.Tensor((n,), "int32")):
        with T.Kernel(T.ceildiv(n, block), threads=32) as bx:
            S = T.alloc_shared((block,), "int32")
            for i in T.Parallel(block):
                S[i] = T.align_up(bx * block + i, 8) + T.align_up(n, 4)
            for i in T.Parallel(block):
                if bx * block + i < n:
                    Out[bx * block + i] = S[i]

    return main

# TIR: T.alloc_shared((32,), "int32")
# TIR: T.ceildiv(bx * 32 + i, 8) * 8 + T.ceildiv(n, 4) * 4
# CHECK: run n=1
# CHECK-NEXT: output Out shape=[1] dtype=int32 sum=4 abs_sum=4
# CHECK-NEXT: check: PASS
# CHECK: run n=7
# CHECK-NEXT: output Out shape=[7] dtype=int32 sum=104 abs_sum=104
# CHECK-NEXT: check: PASS
# CHECK: run n=8
# CHECK-NEXT: output Out shape=[8] dtype=int32 sum=120 abs_sum=120
# CHECK-NEXT: check: PASS
# CHECK: run n=100
# CHECK-NEXT: output Out shape=[100] dtype=int32 sum=15304 abs_sum=15304
# CHECK-NEXT: check: PASS
