# REQUIRES: tl-run
# T.if_then_else(cond, a, b) evaluates only the arm cond picks (TileLang's
# meaning): a condition may guard a load that would be out of bounds in the
# other threads.  The CPU executor runs each arm for the threads that pick it
# (no false out-of-bounds report); the PTX branches around the load (a
# predicated load), where a select would read past A.  A wrong guard is still
# an out-of-bounds load, located.
# RUN: %tl-run --device=cpu --check %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D N=192 -D block=64 -D both=True %s | FileCheck %s
# RUN: not %tl-run --device=cpu --check -D off=1 %s 2>&1 | FileCheck %s --check-prefix=OOB
# RUN: %tl-opt --emit=ptx --target=sm_80 %s | FileCheck %s --check-prefix=PTX
# CHECK: check: PASS
# OOB: if_then_else_guard.py:[[#]]:[[#]]: error: out-of-bounds load of global buffer 'A': index 256 (size 256)
# PTX: setp.{{[a-z]+}}.u32 [[P:%p[0-9]+]]
# PTX: @[[P]] bra
# PTX: ld.global{{.*}}.f32
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def shift(N=256, block=128, off=0, both=False):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                if both:
                    B[bx * block + i] = T.if_then_else(bx * block + i + 1 < N, A[bx * block + i + 1],
                                                       A[bx * block + i - N + 1])
                else:
                    B[bx * block + i] = T.if_then_else(bx * block + i + 1 < N + off, A[bx * block + i + 1], 0.0)

    return main
