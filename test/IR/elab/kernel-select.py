# A file with host code (torch at module level, argparse, main(), tests) and
# three kernels: without --kernel, those whose parameters have values are
# compiled and the others skipped with a warning; --kernel picks one.
# RUN: %tl-opt %s > %t.out 2> %t.err
# RUN: FileCheck %s --check-prefix=ALL < %t.out
# RUN: FileCheck %s --check-prefix=SKIP < %t.err
# RUN: %tl-opt --kernel=scale -D n=64 %s | FileCheck %s --check-prefix=ONE
# RUN: not %tl-opt --kernel=nope %s 2>&1 | FileCheck %s --check-prefix=NOPE
# RUN: not %tl-opt --kernel=scale %s 2>&1 | FileCheck %s --check-prefix=NOVAL
# RUN: %tl-run --device=cpu --check --kernel=scale -D n=64 %s | FileCheck %s --check-prefix=EXEC
# ALL: def copy_kernel(A: T.Tensor((32,), "float32"), B: T.Tensor((32,), "float32")):
# ALL-NOT: scale_kernel
# ALL: def zero(B: T.Tensor((16,), "float32")):
# SKIP: kernel-select.py:[[@LINE+28]]:5: warning: skipped kernel 'scale': parameter 'n' has no value (pass -D n=..., or --kernel=scale to compile it alone)
# ONE: def scale_kernel(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
# ONE-NOT: copy_kernel
# NOPE: error: --kernel=nope: no kernel of that name in this file (kernels: 'copy', 'scale', 'zero')
# NOVAL: kernel-select.py:[[@LINE+24]]:11: error: factory parameter 'n' has no value; pass -D n=<int>
# EXEC: check: PASS
import argparse

import torch
import tilelang
import tilelang.language as T

x = torch.randn(16, device="cuda")
torch.manual_seed(0)


@tilelang.jit(out_idx=[1])
def copy(n=32):
    @T.prim_func
    def copy_kernel(A: T.Tensor((n,), T.float32), B: T.Tensor((n,), T.float32)):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(n):
                B[i] = A[i]

    return copy_kernel


@tilelang.jit(out_idx=[1])
def scale(n):
    @T.prim_func
    def scale_kernel(A: T.Tensor((n,), T.float32), B: T.Tensor((n,), T.float32)):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(n):
                B[i] = A[i] * 2.0

    return scale_kernel


@T.prim_func
def zero(B: T.Tensor((16,), T.float32)):
    with T.Kernel(1, threads=16) as bx:
        for i in T.Parallel(16):
            B[i] = 0.0


class Checker:
    def __init__(self, tol=1e-3):
        self.tol = tol

    def check(self, a, b):
        assert (a - b).abs().max() < self.tol, f"mismatch {(a - b).abs().max()}"


def test_copy():
    k = copy(32)
    a = torch.randn(32, device="cuda")
    Checker().check(k(a), a)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=64)
    args, _ = parser.parse_known_args()
    k = scale(args.n)
    a = torch.randn(args.n, device="cuda")
    print(f"max err {(k(a) - 2 * a).abs().max():.3e}", *[1, 2], sep=" ")


if __name__ == "__main__":
    main()
