# RUN: %tl-opt --passes=atomic,barriers,layout-inference,lower-tile-ops %s > %t.f16
# RUN: %tl-opt --passes=atomic-vectorize --target=sm_80 %t.f16 | FileCheck %s --check-prefix=PAIR
# RUN: %tl-opt --passes=atomic,barriers,layout-inference,lower-tile-ops -D "dtype='bfloat16'" %s > %t.bf16
# RUN: %tl-opt --passes=atomic-vectorize --target=sm_80 %t.bf16 | FileCheck %s --check-prefix=SCALAR
# RUN: %tl-opt --passes=atomic-vectorize --target=sm_90a %t.bf16 | FileCheck %s --check-prefix=PAIR
# Pass "atomic-vectorize" (lib/Lower/lower_atomic.c) alone, on SIMT IR text:
# a T.unroll(8) of scalar 16-bit float T.ptx_atomic_add at consecutive
# offsets (even base) becomes a T.unroll(4) of 2-lane atomics reading a
# T.Ramp of 2 (red.global.add.noftz.f16x2 / .bf16x2), where --target has
# them: f16x2 from sm_60, bf16x2 only from sm_90 (PTX ISA §9.7.13.5).  On
# sm_80 the bfloat16 atomics stay scalar.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=None)
def kernel(dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((64, 64), dtype), C: T.Tensor((64, 64), dtype)):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((64, 64), dtype)
            T.copy(A, A_s)
            T.atomic_add(C[0:64, 0:64], A_s)

    return main

# PAIR: for vq_1 in T.unroll(4):
# PAIR-NEXT: for vp in T.unroll(4):
# PAIR-NEXT: T.ptx_atomic_add(C, {{.*}} + vp * 2), A_s[T.Ramp({{.*}} + vp * 2), 1, 2)], False)
# PAIR-NOT: T.ptx_atomic_add

# SCALAR: for vq_1 in T.unroll(4):
# SCALAR-NEXT: for vo in T.unroll(8):
# SCALAR-NEXT: T.ptx_atomic_add(C, {{.*}} + vo), A_s[{{.*}} + vo)], False)
# SCALAR-NOT: T.Ramp({{.*}}, 1, 2)
