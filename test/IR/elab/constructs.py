# Statement and expression forms the elaborator accepts, in canonical form.
# RUN: %tl-opt %s | FileCheck %s
# RUN: %tl-opt %s | %tl-opt - | FileCheck %s
# CHECK: acc = T.alloc_var("float32", 0.0)
# CHECK: for k in T.serial(2, 10, 2):
# CHECK-NEXT: acc[0] = acc[0] + T.Cast("float32", A[bx, k])
# CHECK: for k in T.unroll(4):
# CHECK: for t in T.serial(3):
# CHECK: if bx < 2:
# CHECK: elif bx == 5:
# CHECK: else:
# CHECK: y = T.if_then_else(bx > 1, A[bx, 0], T.float16(1.5))
# CHECK: B[bx, 0] = T.Cast("float32", y) + acc[0]
# CHECK: T.fill(S, -T.infinity("float32"))
# CHECK: T.reduce_max(S, R, dim=0)
# CHECK: T.sync_threads()
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def kernel(N=16, use_unroll=True, dtype=T.float16):
    steps = (2, 10, 2)
    lo, hi, st = steps

    @T.prim_func
    def main(A: T.Tensor((N, N), dtype), B: T.Tensor((N, N), "float32")):
        with T.Kernel(N, threads=32) as bx:
            acc = T.alloc_var(T.float32, init=0)
            S = T.alloc_fragment((8, 4), "float32")
            R = T.alloc_fragment((4,), "float32")
            for k in T.serial(lo, hi, st):
                acc += A[bx, k].astype("float32")
            if use_unroll:
                for k in T.unroll(4):
                    acc = acc * 2
            for t in range(3):
                acc -= 1
            if bx < 2:
                acc = 0
            elif bx == 5:
                acc = 1
            else:
                acc = 2
            y = A[bx, 0] if bx > 1 else T.float16(1.5)
            B[bx, 0] = T.Cast("float32", y) + acc
            T.fill(S, -T.infinity("float32"))
            T.reduce_max(S, R, dim=0)
            T.sync_threads()
    return main
