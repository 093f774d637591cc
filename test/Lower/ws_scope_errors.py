# RUN: not %tl-opt --emit=simt --kernel=bad_group %s 2>&1 | FileCheck %s --check-prefix=GROUP
# RUN: not %tl-opt --emit=simt --kernel=nested %s 2>&1 | FileCheck %s --check-prefix=NESTED
# RUN: not %tl-opt --emit=simt --kernel=two_groups %s 2>&1 | FileCheck %s --check-prefix=TWO
# RUN: not %tl-opt --emit=simt --kernel=odd_threads %s 2>&1 | FileCheck %s --check-prefix=THREADS
# RUN: not %tl-opt --kernel=not_a_barrier %s 2>&1 | FileCheck %s --check-prefix=NOTBAR
# RUN: not %tl-opt --kernel=bad_count %s 2>&1 | FileCheck %s --check-prefix=COUNT
# RUN: not %tl-opt --emit=simt --kernel=outside_fragment %s 2>&1 | FileCheck %s --check-prefix=OUTSIDE
# Explicit warp specialisation (lib/Lower/ws_scope.c, lib/Frontend/elab_ws.c):
# what is refused, each at its place.
# GROUP: ws_scope_errors.py:26:18: error: T.ws(2) needs 384 threads; the kernel has 256
# NESTED: ws_scope_errors.py:37:18: error: T.ws scopes cannot be nested
# TWO: ws_scope_errors.py:49:18: error: T.ws over several warpgroups is not supported yet (one warpgroup per scope)
# THREADS: ws_scope_errors.py:59:9: error: T.ws needs a constant thread count that is a multiple of 128
# NOTBAR: ws_scope_errors.py:73:34: error: T.barrier_arrive expects a barrier of T.alloc_barrier (bars or bars[i]), got
# OUTSIDE: ws_scope_errors.py:96:18: error: 'f' is written outside the T.ws scopes, where warpgroup 0 runs that work, and used by T.ws(1): write it inside the scope that uses it
# COUNT: ws_scope_errors.py:83:36: error: T.alloc_barrier: an arrive count must be 1 to 2^20-1, got 0
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def bad_group(N=128):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=256) as bx:
            with T.ws(2):
                T.copy(A, B)

    return main


@tilelang.jit(out_idx=[1])
def nested(N=128):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=256) as bx:
            with T.ws(0):
                with T.ws(0):
                    T.copy(A, B)

    return main


@tilelang.jit(out_idx=[1])
def two_groups(N=128):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=256) as bx:
            with T.ws(0, 1):
                T.copy(A, B)

    return main


@tilelang.jit(out_idx=[1])
def odd_threads(N=128):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=192) as bx:
            with T.ws(0):
                T.copy(A, B)

    return main


@tilelang.jit(out_idx=[1])
def not_a_barrier(N=128):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=256) as bx:
            S = T.alloc_shared((N,), "float32")
            with T.ws(0):
                T.barrier_arrive(S[0])

    return main


@tilelang.jit(out_idx=[1])
def bad_count(N=128):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=256) as bx:
            bars = T.alloc_barrier([128, 0])
            T.copy(A, B)

    return main


@tilelang.jit(out_idx=[1])
def outside_fragment(N=128):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=256) as bx:
            f = T.alloc_fragment((N,), "float32")
            T.copy(A, f)
            with T.ws(1):
                T.copy(f, B)

    return main
