# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check --dim n=5,64 %s | FileCheck %s
# RUN: %tl-opt %s | FileCheck %s --check-prefix=TIR
# Compile-time Python a factory runs before its kernel (TileLang runs it as
# Python): math.gcd / math.lcm of integer constants (deepseek_mhc's
# h_blk = math.gcd(hidden, h_blk)) and tvm.DataType(dtype).bits (gemv's
# TILE_K = 128 // DataType(dtype).bits).  hidden=96, h_blk=64: gcd = 32 columns
# per step; lcm(4, 6) = 12 is added; float16: 128 // 16 = 8 elements per
# thread.  Out[r, c] = 2 * X[r, c] + 12, checked against the reference evaluator.
import math

import tilelang
import tilelang.language as T
from tvm import DataType

n = T.dynamic("n")


@tilelang.jit(out_idx=-1)
def scale(hidden=96, h_blk=64, dtype="float16"):
    h_blk = math.gcd(hidden, h_blk)
    add = math.lcm(4, 6) + math.gcd() + math.gcd(-9, 0) - 9
    vec = 128 // DataType(dtype).bits
    threads = h_blk // vec

    @T.prim_func
    def main(X: T.Tensor((n, hidden), dtype), Out: T.Tensor((n, hidden), dtype)):
        with T.Kernel(n, threads=threads) as r:
            S = T.alloc_shared((h_blk,), dtype)
            for c0 in T.serial(T.ceildiv(hidden, h_blk)):
                T.copy(X[r, c0 * h_blk], S)
                for t, v in T.Parallel(threads, vec):
                    Out[r, c0 * h_blk + t * vec + v] = S[t * vec + v] * 2 + add

    return main

# TIR: T.alloc_shared((32,), "float16")
# TIR: T.serial(3)
# TIR: T.Parallel(4, 8)
# TIR: * T.float16(2.0) + T.float16(12.0)
# CHECK: run n=5
# CHECK: check: PASS
# CHECK: run n=64
# CHECK: check: PASS
