# The versioning pass: a T.Parallel storing T.if_then_else(c, a, b), c affine
# in the loop variables, gets a copy storing a for blocks where c holds at
# every (i, j) -- tested at the corner where c is tightest (i = 0, j = 63
# for i - j >= ...; i = 31, j = 0 for <=).  A condition that is not affine in
# them (a load, i * j) is left alone.  Both run on the SIMT executor against
# the reference evaluator.
# RUN: %tl-opt --emit=simt --print-after-all=all %s 2>&1 >/dev/null | FileCheck %s
# RUN: %tl-run --device=cpu --check -D n=256 %s | FileCheck %s --check-prefix=EXEC
# CHECK-LABEL: // ----- after versioning -----
# CHECK: if bx * 32 >= k * 64 + 63:
# CHECK-NEXT: for i, j in T.Parallel(32, 64):
# CHECK-NEXT: S[i, j] = 1.0
# CHECK-NEXT: else:
# CHECK-NEXT: for i, j in T.Parallel(32, 64):
# CHECK-NEXT: S[i, j] = T.if_then_else(bx * 32 + i >= k * 64 + j, 1.0, 0.0)
# CHECK: if bx * 32 + 31 <= k * 64:
# CHECK: U[i, j] = 2.0
# CHECK: U[i, j] = T.if_then_else(
# CHECK-NOT: {{^ *}}if {{.*}}:
# CHECK: V[i, j] = T.if_then_else(i * j < 5, 3.0, 0.0)
# CHECK-LABEL: // ----- after layout-inference -----
# EXEC: check: PASS
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def kernel(n=256):
    @T.prim_func
    def main(A: T.Tensor((n, 64), "float32"), C: T.Tensor((n, 64), "float32")):
        with T.Kernel(n // 32, threads=128) as bx:
            S = T.alloc_fragment((32, 64), "float32")
            U = T.alloc_fragment((32, 64), "float32")
            V = T.alloc_fragment((32, 64), "float32")
            W = T.alloc_fragment((32, 64), "float32")
            T.clear(W)
            for k in T.serial(n // 64):
                for i, j in T.Parallel(32, 64):
                    S[i, j] = T.if_then_else(bx * 32 + i >= k * 64 + j, 1.0, 0.0)
                for i, j in T.Parallel(32, 64):
                    U[i, j] = T.if_then_else(bx * 32 + i <= k * 64 + j, 2.0, 0.0)
                for i, j in T.Parallel(32, 64):
                    V[i, j] = T.if_then_else(i * j < 5, 3.0, 0.0)
                for i, j in T.Parallel(32, 64):
                    W[i, j] += S[i, j] + U[i, j] + V[i, j] * A[bx * 32 + i, j]
            T.copy(W, C[bx * 32, 0])
    return main
