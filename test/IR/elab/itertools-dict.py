# itertools.product, dict(pairs), zip at compile time (autotuner-style config lists).
# RUN: %tl-opt %s | FileCheck %s
# CHECK: def g(A: T.Tensor((16,), "float32")):
import itertools
from itertools import product
import tilelang
import tilelang.language as T
@tilelang.jit
def f(n=8):
    configs = [dict(zip(("a", "b"), v)) for v in itertools.product([1, 2], [3, 4, 5])]
    assert len(configs) == 6 and configs[-1]["b"] == 5 and list(product("ab", [0]))[1] == ("b", 0)
    m = sum_all = configs[3]["a"] * n
    @T.prim_func
    def g(A: T.Tensor((m,), T.float32)):
        with T.Kernel(1, threads=32) as bx:
            A[0] = 1.0
    return g
