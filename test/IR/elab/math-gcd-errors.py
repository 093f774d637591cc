# math.gcd / math.lcm take integer constants; an overflowing lcm is an error.
# RUN: not %tl-opt %s -D CASE=0 2>&1 | FileCheck %s --check-prefix=FLOAT
# RUN: not %tl-opt %s -D CASE=1 2>&1 | FileCheck %s --check-prefix=BIG
# RUN: not %tl-opt %s -D CASE=2 2>&1 | FileCheck %s --check-prefix=DTYPE
# FLOAT: math-gcd-errors.py:[[@LINE+13]]:28: error: math.gcd needs integer constants, got float 2.5
# BIG: math-gcd-errors.py:[[@LINE+14]]:16: error: math.lcm result out of range
# DTYPE: math-gcd-errors.py:[[@LINE+14]]:21: error: unknown dtype 'float17'
import math

import tilelang.language as T
from tvm import DataType

CASE = 0


def pick():
    if CASE == 0:
        return math.gcd(4, 2.5)
    if CASE == 1:
        return math.lcm(2**40, 2**40 + 1, 3**30)
    return DataType("float17").bits


@T.prim_func
def k(A: T.Tensor((128,), T.float32)):
    with T.Kernel(pick(), threads=32) as bx:
        A[bx] = 1.0
