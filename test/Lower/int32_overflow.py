# RUN: not %tl-opt --emit=simt %s 2>&1 | FileCheck %s --check-prefix=OVF
# RUN: not %tl-opt --emit=simt -D case=sum %s 2>&1 | FileCheck %s --check-prefix=SUM
# RUN: not %tl-opt --emit=simt -D case=shl %s 2>&1 | FileCheck %s --check-prefix=SHL
# RUN: not %tl-opt --emit=simt -D case=shift_amount %s 2>&1 | FileCheck %s --check-prefix=AMT
# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check -D case=wide %s | FileCheck %s --check-prefix=PASS
# RUN: %tl-run --device=cpu --check -D case=guarded %s | FileCheck %s --check-prefix=PASS
# Issue 15 (class 3), static check 5 (lib/Lower/static_check.c): signed int32
# arithmetic whose exact range leaves int32 is a located error.  Found by
# test/fuzz/mutate.py (60-minute run, seed 1510) in test/Lower/versioning.py
# with `k * 64 + j` -> `k * 2147483647 + j`: the executor wrapped the product,
# the reference evaluator computed it exactly, and the comparison came out
# differently in 768 of 16384 elements with no diagnostic.  Computed in int64
# (a cast of one operand) the kernel passes; under a T.if the check leaves it
# to run time (the guard may exclude the values that overflow).  A left shift
# counts as a product; a shift amount outside [0, 32) is an error too, also in
# a tile op's region corner (a new user's trial: `B[ko >> block_K, ...]` with
# block_K = 32 in a T.copy compiled, and only the reference evaluator refused
# it at run time).
# OVF: int32_overflow.py:[[@LINE+21]]:{{[0-9]+}}: error: int32 arithmetic overflows: this product takes the values 0 to 6442450941, outside int32 (the GPU would wrap the result); cast an operand to int64 (T.Cast("int64", ...)) to compute it wider
# SUM: int32_overflow.py:[[@LINE+22]]:{{[0-9]+}}: error: int32 arithmetic overflows: this sum takes the values 2147483600 to 2147483664, outside int32
# SHL: int32_overflow.py:[[@LINE+23]]:{{[0-9]+}}: error: int32 arithmetic overflows: this left shift takes the values 0 to 3221225472, outside int32
# AMT: int32_overflow.py:[[@LINE+15]]:{{[0-9]+}}: error: shift by 32 is out of range for int32 (the amount must be 0 to 31)
# PASS: check: PASS
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def kernel(case="product"):
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(2, threads=128) as bx:
            S = T.alloc_fragment((32, 64), "float32")
            T.clear(S)
            for k in T.serial(4):
                if case == "shift_amount":
                    T.copy(A[(k + 29) >> (k + 29), 0], S)
                for i, j in T.Parallel(32, 64):
                    if case == "product":
                        S[i, j] += T.if_then_else(bx * 32 + i >= k * 2147483647 + j, 1.0, 0.0)
                    elif case == "sum":
                        S[i, j] += T.if_then_else(bx + j + 2147483600 > 0, 1.0, 0.0)
                    elif case == "shl":
                        S[i, j] += T.if_then_else((k << 30) + j > 0, 1.0, 0.0)
                    elif case == "wide":
                        S[i, j] += T.if_then_else(bx * 32 + i >= T.Cast("int64", k) * 2147483647 + j, 1.0, 0.0)
                    else:
                        if k < 1:
                            S[i, j] += T.if_then_else(bx * 32 + i >= k * 2147483647 + j, 1.0, 0.0)
            for i, j in T.Parallel(32, 64):
                C[bx * 32 + i, j] = S[i, j] + A[bx * 32 + i, j]
    return main
