# T.Persistent's arguments and loop variables are checked where they are written.
# RUN: not %tl-opt %s -D CASE=0 2>&1 | FileCheck %s --check-prefix=COUNT
# RUN: not %tl-opt %s -D CASE=1 2>&1 | FileCheck %s --check-prefix=DOMAIN
# RUN: not %tl-opt %s -D CASE=2 2>&1 | FileCheck %s --check-prefix=MISSING
# RUN: not %tl-opt %s -D CASE=3 2>&1 | FileCheck %s --check-prefix=DUP
# COUNT: persistent-errors.py:[[@LINE+13]]:17: error: T.Persistent has 2 extents but 1 loop variable
# DOMAIN: persistent-errors.py:[[@LINE+15]]:36: error: T.Persistent: the domain must be a list of 1 to 8 extents, got int 4
# MISSING: persistent-errors.py:[[@LINE+17]]:23: error: T.Persistent needs its 'index' argument
# DUP: persistent-errors.py:[[@LINE+19]]:21: error: duplicate loop variable 'bx'
import tilelang.language as T

CASE = 0


@T.prim_func
def k(A: T.Tensor((64, 64), T.float32)):
    with T.Kernel(4, threads=32) as b:
        if CASE == 0:
            for bx in T.Persistent([4, 4], 4, b):
                A[bx, 0] = 1.0
        elif CASE == 1:
            for bx in T.Persistent(4, 4, b):
                A[bx, 0] = 1.0
        elif CASE == 2:
            for bx in T.Persistent([4], 4):
                A[bx, 0] = 1.0
        else:
            for bx, bx in T.Persistent([4, 4], 4, b):
                A[bx, 0] = 1.0
