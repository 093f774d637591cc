# REQUIRES: tl-run
# T.annotate_layout({B: T.Layout(B.shape, fn)}) of a global buffer permutes
# its memory (TileLang's flash-attention backward, make_dq_layout): B[i, j]
# lives at the row-major position of fn(i, j) = [j // 8, i, j % 8] in a
# (N/8, M, 8) space. The kernel writes B[i, j] = A[i, j] through the layout
# (a T.Parallel store, element atomics, T.copy of a region, a region
# T.atomic_add(..., use_tma=True) from a shared tile: element atomics), reads it back
# through the layout into C (C == A), and the saved raw memory of B is checked
# element by element against the permutation computed here, in Python,
# independently of the compiler (npy_tool.py). Against the reference
# evaluator on sm_80 and sm_90a.
# RUN: rm -rf %t && mkdir -p %t
# RUN: python3 %S/../../IR/tl-run/Inputs/npy_tool.py write %t/a.npy '<f4' 16,32 'i'
# RUN: %tl-run --device=cpu --check --input A=%t/a.npy --save %t/s %s | FileCheck %s
# RUN: python3 %S/../../IR/tl-run/Inputs/npy_tool.py check %t/s/B.npy '((i // 8) %% 16) * 32 + (i // 128) * 8 + i %% 8' | FileCheck %s --check-prefix=RAW
# RUN: python3 %S/../../IR/tl-run/Inputs/npy_tool.py check %t/s/C.npy 'i' | FileCheck %s --check-prefix=RAW
# RUN: %tl-run --device=cpu --check --target=sm_90a --input A=%t/a.npy --save %t/h -D form=1 %s | FileCheck %s
# RUN: python3 %S/../../IR/tl-run/Inputs/npy_tool.py check %t/h/B.npy '((i // 8) %% 16) * 32 + (i // 128) * 8 + i %% 8' | FileCheck %s --check-prefix=RAW
# RUN: python3 %S/../../IR/tl-run/Inputs/npy_tool.py check %t/h/C.npy 'i' | FileCheck %s --check-prefix=RAW
# RUN: %tl-run --device=cpu --check --input A=%t/a.npy --save %t/c -D form=2 %s | FileCheck %s
# RUN: python3 %S/../../IR/tl-run/Inputs/npy_tool.py check %t/c/B.npy '((i // 8) %% 16) * 32 + (i // 128) * 8 + i %% 8' | FileCheck %s --check-prefix=RAW
# RUN: python3 %S/../../IR/tl-run/Inputs/npy_tool.py check %t/c/C.npy 'i' | FileCheck %s --check-prefix=RAW
# RUN: %tl-run --device=cpu --check --target=sm_90a --input A=%t/a.npy --save %t/t -D form=3 %s | FileCheck %s
# RUN: python3 %S/../../IR/tl-run/Inputs/npy_tool.py check %t/t/B.npy '((i // 8) %% 16) * 32 + (i // 128) * 8 + i %% 8' | FileCheck %s --check-prefix=RAW
# RUN: python3 %S/../../IR/tl-run/Inputs/npy_tool.py check %t/t/C.npy 'i' | FileCheck %s --check-prefix=RAW
# RUN: %tl-opt -D form=3 %s | FileCheck %s --check-prefix=TIR
# CHECK: check: PASS
# TIR: T.atomic_add(B[{{.*}} // 8 {{.*}}], A_s[
# RAW: ok 512
import tilelang
import tilelang.language as T


def make_layout(buf):
    return T.Layout(buf.shape, lambda i, j: [j // 8, i, j % 8])


@tilelang.jit(out_idx=[-2, -1])
def permuted(M=16, N=32, form=0):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            T.annotate_layout({B: make_layout(B)})
            if form == 0:
                for i, j in T.Parallel(M, N):
                    B[i, j] = A[i, j]
            elif form == 1:
                for i, j in T.Parallel(M, N):
                    B[i, j] = 0.0
                T.sync_threads()
                for i, j in T.Parallel(M, N):
                    T.atomic_add(B[i, j], A[i, j])
            elif form == 2:
                T.copy(A, B)
            else:
                A_s = T.alloc_shared((M, N), "float32")
                T.copy(A, A_s)
                for i, j in T.Parallel(M, N):
                    B[i, j] = 0.0
                T.sync_threads()
                T.atomic_add(B[0:M, 0:N], A_s, use_tma=True)
            T.sync_threads()
            T.copy(B[0:M, 0:N], C)

    return main
