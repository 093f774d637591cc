# REQUIRES: tl-run
# T.annotate_layout on shared and fragment buffers is a hint (a layout moves
# elements between banks or threads, never changes a value): a TileLang
# swizzle constructor gives the shared buffer the gemm-operand swizzle (the
# XOR in the SIMT IR), read back transposed and shifted by T.Parallel; any
# other layout (here a T.Fragment on the accumulator) leaves the choice to
# layout inference. Exact values against the reference evaluator.
# RUN: %tl-run --device=cpu --check %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --target=sm_90a %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D use_gemm=True %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D use_gemm=True --target=sm_90a %s | FileCheck %s
# RUN: %tl-opt --emit=simt %s | FileCheck %s --check-prefix=SIMT
# CHECK: check: PASS
# SIMT: A_s[T.Ramp({{.*}} ^ {{.*}}] = A[
import tilelang
import tilelang.language as T
from tilelang.layout import make_swizzled_layout


@tilelang.jit(out_idx=[-1])
def annotated(M=64, N=64, use_gemm=False):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((M, N), "float16")
            C = T.alloc_fragment((M, N), "float32")
            T.annotate_layout({A_s: make_swizzled_layout(A_s), C: T.Fragment((M, N), forward_thread_fn=lambda i, j: i % 128)})
            T.copy(A, A_s)
            if use_gemm:
                T.clear(C)
                T.gemm(A_s, A_s, C)
            else:
                for i, j in T.Parallel(M, N):
                    C[i, j] = A_s[j, i] * 2.0 + A_s[i, (j + 1) % N]
            T.copy(C, B)

    return main
