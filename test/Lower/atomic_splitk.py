# REQUIRES: tl-run
# RUN: %tl-opt --emit=simt -D M=256 -D N=256 -D K=256 %examples/gemm_splitk.py | FileCheck %s --check-prefix=F32
# RUN: %tl-opt --emit=ptx --target=sm_80 -D M=256 -D N=256 -D K=256 %examples/gemm_splitk.py | FileCheck %s --check-prefix=F32PTX
# RUN: %tl-opt --emit=simt -D M=256 -D N=256 -D K=256 -D out_dtype=float16 %examples/gemm_splitk.py | FileCheck %s --check-prefix=F16
# RUN: %tl-opt --emit=ptx --target=sm_80 -D M=256 -D N=256 -D K=256 -D out_dtype=float16 %examples/gemm_splitk.py | FileCheck %s --check-prefix=F16PTX
# RUN: %tl-opt --emit=ptx --target=sm_80 -D M=256 -D N=256 -D K=256 -D out_dtype=bfloat16 %examples/gemm_splitk.py | FileCheck %s --check-prefix=BF80
# RUN: %tl-opt --emit=ptx --target=sm_90a -D M=256 -D N=256 -D K=256 -D out_dtype=bfloat16 %examples/gemm_splitk.py | FileCheck %s --check-prefix=BF90
# RUN: %tl-run --device=cpu --check -D M=256 -D N=256 -D K=256 -D split_k=2 %examples/gemm_splitk.py | FileCheck %s --check-prefix=CPU
# RUN: %tl-run --device=cpu --check -D M=256 -D N=256 -D K=256 -D out_dtype=float16 %examples/gemm_splitk.py | FileCheck %s --check-prefix=CPU
# Split-K GEMM (issue 7 point 3): every thread adds the accumulator
# registers it owns (the mma C layout) to C with atomics, no bounds guard
# (the block ranges prove the tile in bounds).  f32: one atomic per register.
# f16 (and bf16 on sm_90): register pairs (2q, 2q+1) are columns j, j+1 with
# j even, so they become one f16x2 / bf16x2 vector atomic.

# F32: for vo{{[_0-9]*}} in T.unroll(2):
# F32-NEXT: T.ptx_atomic_add(C, (by * 128 + {{.*}}) * 256 + (bx * 128 + {{.*}}), C_local[{{.*}}], False)
# F32-NOT: if

# F32PTX-COUNT-128: atom.global.add.f32

# F16: T.ptx_atomic_add(C, {{.*}}, T.Cast("float16x2", C_local[T.Ramp((mi{{.*}} * 8 + nj{{.*}}) * 4 + h{{.*}} * 2, 1, 2)]), False)
# F16PTX-COUNT-64: red.global.add.noftz.f16x2
# F16PTX-NOT: atom.global
# BF80-NOT: bf16x2
# BF80: atom.global.cas.b32
# BF90-COUNT-64: red.global.add.noftz.bf16x2

# CPU: check: PASS
