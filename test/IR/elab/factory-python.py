# Compile-time Python in a factory: asserts (with f-string messages),
# comprehensions, zip/enumerate/range/isinstance, 'is None', 'in', keyword-only
# and defaulted parameters, *args/**kwargs, dicts.
# RUN: %tl-opt %s | FileCheck %s
# RUN: %tl-run --device=cpu --check %s | FileCheck %s --check-prefix=EXEC
# RUN: not %tl-opt -D n=48 %s 2>&1 | FileCheck %s --check-prefix=ASSERT
# RUN: %tl-opt -D 'weights=(4.0, 0.25)' %s | FileCheck %s --check-prefix=TUPLE
# CHECK: def scale_add(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32"), C: T.Tensor((64,), "float32")):
# CHECK: C[i] = A[i] * 3.0 + B[i] * 0.5
# EXEC: check: PASS
# TUPLE: C[i] = A[i] * 4.0 + B[i] * 0.25
# ASSERT: factory-python.py:[[@LINE+10]]:5: error: assertion failed: n=48 must be a multiple of 32 (got 16 left over)
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[2])
def scale_add(n=64, *args, block=None, dtype="float32", weights=(3.0, 0.5), **kwargs):
    block = 32 if block is None else block
    assert isinstance(n, int) and n > 0, "n must be a positive int"
    assert dtype in ("float32", "float16"), f"unsupported dtype {dtype!r}"
    assert n % block == 0, f"n={n} must be a multiple of {block} (got {n % block} left over)"
    names = [f"{name}{i}" for i, name in enumerate(["w", "w"])]
    table = {k: v for k, v in zip(names, weights)}
    assert list(table) == ["w0", "w1"] and len([x for x in range(n) if x % block == 0]) == n // block
    wa, wb = table["w0"], table["w1"]

    @T.prim_func
    def scale_add(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), C: T.Tensor((n,), dtype)):
        with T.Kernel(n // block, threads=block) as bx:
            for i in T.Parallel(n):
                C[i] = A[i] * wa + B[i] * wb

    return scale_add
