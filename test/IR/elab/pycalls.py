# Compile-time Python that TileLang's autotune config helpers use (elab_pycalls.c):
# dict(k=v, **m), dict.keys/values/items/get, list.append/extend, itertools.product(*seqs),
# an import inside a helper function.
# RUN: %tl-opt %s | FileCheck %s
# CHECK: def g(A: T.Tensor((67,), "float32")):
import itertools
import tilelang
import tilelang.language as T


def get_configs():
    import itertools as it
    params = dict(a=[1, 2], **{"b": [3, 4, 5]})
    configs = []
    for v in it.product(*params.values()):
        configs.append(dict(zip(params.keys(), v)))
    configs.extend([{"a": 9, "b": 9}])
    return configs


@tilelang.jit
def f(n=8):
    configs = get_configs()
    d2 = dict(a=1, b=2)
    pairs = d2.items()
    assert len(configs) == 7
    assert configs[0]["a"] == 1 and configs[0]["b"] == 3 and configs[5]["b"] == 5
    assert list(pairs) == [("a", 1), ("b", 2)] and d2.get("y", 4) == 4 and d2.get("b") == 2
    assert dict([("k", 1)], k=2)["k"] == 2
    m = sum_all = configs[6]["a"] * 7 + configs[1]["b"]

    @T.prim_func
    def g(A: T.Tensor((m,), T.float32)):
        with T.Kernel(1, threads=32) as bx:
            A[0] = 1.0

    return g
