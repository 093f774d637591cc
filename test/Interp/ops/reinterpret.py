# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D dtype=bfloat16 -D itype=uint16 %s | FileCheck %s --check-prefix=ANY
# RUN: %tl-run --device=cpu --check -D dtype=float32 -D itype=int32 %s | FileCheck %s --check-prefix=ANY
# RUN: not %tl-opt -D itype=int32 %s 2>&1 | FileCheck %s --check-prefix=ERR
# T.reinterpret(dtype, x) (TVM's, exported by TileLang): x's bits as dtype.
# B[i] = the bits of A[i]; B[N] = the bits of float16 1.0 (0x3C00 = 15360)
# and B[N + 1] those of -2.0 (0xC000 = -16384 as int16), so B's sum is that
# of A's bit patterns minus 1024; every element is checked against the
# reference evaluator.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def reinterpret_bits(N=256, dtype="float16", itype="int16"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N + 2,), itype)):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(N):
                B[i] = T.reinterpret(itype, A[i])
            B[N] = T.reinterpret(itype, T.Cast(dtype, 1.0))
            B[N + 1] = T.reinterpret(itype, T.Cast(dtype, -2.0))

    return main

# CHECK: output B shape=[258] dtype=int16 sum=-627983 abs_sum=4.22905e+06
# CHECK-NEXT: check: PASS
# ANY: check: PASS
# ERR: error: T.reinterpret: float16 has 16 bits, int32 has 32 (they must agree; bool has no bits to reinterpret)
