# REQUIRES: tl-run
# T.Tensor(shape, dtype, X.data) inside a kernel (TileLang's buffer declared
# over another buffer's data, as its convolution example flattens the filter
# and the output): the view of X with that shape, checked by the CPU executor
# against the reference evaluator; misuse is a located error.
# RUN: %tl-run --device=cpu --check %s | FileCheck %s
# RUN: %tl-opt %s | FileCheck %s --check-prefix=TIR
# RUN: not %tl-opt -D bad=1 %s 2>&1 | FileCheck %s --check-prefix=BAD1
# RUN: not %tl-opt -D bad=2 %s 2>&1 | FileCheck %s --check-prefix=BAD2
# RUN: not %tl-opt -D bad=3 %s 2>&1 | FileCheck %s --check-prefix=BAD3
# CHECK: check: PASS
# TIR: for vw_i0, vw_i1 in T.Parallel(16, 32):
# TIR-NEXT: if bx * 16 + vw_i0 < 32:
# TIR-NEXT: S[vw_i0, vw_i1] = A[((bx * 16 + vw_i0) * 32 + vw_i1) // 32 // 4, ((bx * 16 + vw_i0) * 32 + vw_i1) // 32 % 4, ((bx * 16 + vw_i0) * 32 + vw_i1) % 32]
# BAD1: tensor_data.py:{{[0-9]+}}:{{[0-9]+}}: error: T.Tensor: data must be another buffer's data (X.data)
# BAD2: tensor_data.py:{{[0-9]+}}:{{[0-9]+}}: error: T.Tensor: the new shape holds 16384 bits, 'A' 32768
# BAD3: tensor_data.py:{{[0-9]+}}:{{[0-9]+}}: error: T.Tensor over another buffer's data needs its dtype
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def flatten(B=8, H=4, W=32, block=16, bad=0):
    @T.prim_func
    def flatten(A: T.Tensor((B, H, W), "float32"), O: T.Tensor((B, H, W), "float32")):
        with T.Kernel(B * H // block, threads=128) as bx:
            rows = B * H // 2 if bad == 2 else B * H
            if bad == 1:
                a_flat = T.Tensor((rows, W), "float32", A)
            else:
                a_flat = T.Tensor((rows, W), "float32", A.data)
            if bad == 3:
                o_flat = T.Tensor((B * H, W), data=O.data)
            else:
                o_flat = T.Tensor((B * H, W), "float32", O.data)
            S = T.alloc_shared((block, W), "float32")
            T.copy(a_flat[bx * block, 0], S)
            for i, j in T.Parallel(block, W):
                S[i, j] = S[i, j] * 2.0 + j
            T.copy(S, o_flat[bx * block, 0])

    return flatten
