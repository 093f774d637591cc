# -D binds factory parameters; values of every kind; the last -D wins.
# RUN: %tl-opt -D block_M=64 %s | FileCheck %s
# RUN: %tl-opt -D block_M=32 -D block_M=0x40 %s | FileCheck %s
# RUN: %tl-opt -D block_M=64 -D dtype=bfloat16 %s | FileCheck %s --check-prefix=BF16
# RUN: %tl-opt -D block_M=64 -D "dtype='bfloat16'" -D out_last=False %s | FileCheck %s --check-prefix=NOOUT
# CHECK: T.func_attr({"out_idx": [1]})
# CHECK: T.Kernel(16, threads=128)
# CHECK: A_shared = T.alloc_shared((64, 32), "float16")
# CHECK: T.copy(A[bx * 64:bx * 64 + 64, 0:32], A_shared)
# BF16: A_shared = T.alloc_shared((64, 32), "bfloat16")
# NOOUT-NOT: func_attr
# NOOUT: A_shared = T.alloc_shared((64, 32), "bfloat16")
import tilelang
import tilelang.language as T


def kernel(M=1024, block_M=128, dtype="float16", out_last=True):
    idx = 1 if out_last else None

    @tilelang.jit(out_idx=idx)
    def unused():
        pass

    @T.prim_func
    def main(A: T.Tensor((M, 32), dtype), B: T.Tensor((M, 32), dtype)):
        T.func_attr({"out_idx": idx})
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            A_shared = T.alloc_shared((block_M, 32), dtype)
            T.copy(A[bx * block_M, 0], A_shared)
            T.copy(A_shared, B[bx * block_M, 0])
    return main
