"""Several `with T.Kernel(...)` scopes in one prim_func (issue 30): one kernel object, one call, the
scopes launched in order (here on the CPU SIMT executor with NumPy), sharing the prim_func's tensors:
a split-then-combine reduction as TileLang's flash_decoding writes it (the intermediate passed as a
parameter), with exact integer results; out_idx and dynamic dims as for one scope."""
import numpy as np

import tilelang_ptx as tilelang
import tilelang_ptx.language as T


@tilelang.jit(out_idx=[-1])
def split_then_combine(N=1024, blocks=8):
    chunk = N // blocks

    @T.prim_func
    def main(A: T.Tensor((N,), "int32"), Partial: T.Tensor((blocks,), "int32"),
             Out: T.Tensor((2,), "int32")):
        with T.Kernel(blocks, threads=128) as bx:
            S = T.alloc_shared((chunk,), "int32")
            acc = T.alloc_fragment((1,), "int32")
            T.copy(A[bx * chunk:(bx + 1) * chunk], S)
            T.reduce_sum(S, acc, dim=0)
            T.copy(acc, Partial[bx:bx + 1])
        with T.Kernel(1, threads=32) as _:
            P = T.alloc_shared((blocks,), "int32")
            s = T.alloc_fragment((1,), "int32")
            m = T.alloc_fragment((1,), "int32")
            T.copy(Partial, P)
            T.reduce_sum(P, s, dim=0)
            T.reduce_max(P, m, dim=0)
            T.copy(s, Out[0:1])
            T.copy(m, Out[1:2])

    return main


@tilelang.jit(out_idx=-1)
def reverse_twice():
    n = T.dynamic("n")

    @T.prim_func
    def main(A: T.Tensor((n,), "int32"), Tmp: T.Tensor((n,), "int32"), Out: T.Tensor((n,), "int32")):
        with T.Kernel(T.ceildiv(n, 64), threads=64) as bx:
            for i in T.Parallel(64):
                if bx * 64 + i < n:
                    Tmp[bx * 64 + i] = A[n - 1 - (bx * 64 + i)] * 3
        with T.Kernel(T.ceildiv(n, 128), threads=128) as bx:
            for i in T.Parallel(128):
                if bx * 128 + i < n:
                    Out[bx * 128 + i] = Tmp[n - 1 - (bx * 128 + i)] + 1

    return main


def test_split_then_combine_exact():
    kernel = split_then_combine(1024, 8)
    A = np.arange(1024, dtype=np.int32)
    Partial = np.full(8, -1, dtype=np.int32)
    Out = kernel(A, Partial)
    want = A.reshape(8, 128).sum(axis=1)
    assert Partial.tolist() == want.tolist()          # the first launch's workspace, seen by the caller
    assert Out.tolist() == [int(want.sum()), int(want.max())] == [523776, 122816]
    src = kernel.get_kernel_source()
    assert src.count(".entry") == 2 and ".entry main(" in src and ".entry main_kernel_1(" in src
    assert kernel.out_idx == [2]


def test_dynamic_dims_and_out_idx():
    kernel = reverse_twice()
    for n in (1, 63, 200):
        A = np.arange(n, dtype=np.int32) * 2
        Tmp = np.zeros(n, dtype=np.int32)
        Out = kernel(A, Tmp)
        assert Out.shape == (n,)
        assert Tmp.tolist() == (A[::-1] * 3).tolist()
        assert Out.tolist() == (A * 3 + 1).tolist()


@tilelang.jit(out_idx=-1)
def workspace_then_combine(N=1024, blocks=8):
    chunk = N // blocks

    @T.prim_func
    def main(A: T.Tensor((N,), "int32"), Out: T.Tensor((blocks + 1,), "int32")):
        Partial = T.alloc_global((blocks,), "int32")  # as TileLang's flash_decoding: shared by both scopes
        with T.Kernel(blocks, threads=128) as bx:
            S = T.alloc_shared((chunk,), "int32")
            acc = T.alloc_fragment((1,), "int32")
            T.copy(A[bx * chunk:(bx + 1) * chunk], S)
            T.reduce_sum(S, acc, dim=0)
            T.copy(acc, Partial[bx:bx + 1])
        with T.Kernel(1, threads=32) as _:
            P = T.alloc_shared((blocks,), "int32")
            s = T.alloc_fragment((1,), "int32")
            T.copy(Partial, P)
            T.reduce_sum(P, s, dim=0)
            T.copy(P, Out[0:blocks])
            T.copy(s, Out[blocks:blocks + 1])

    return main


def test_alloc_global_shared_by_the_scopes():
    kernel = workspace_then_combine(1024, 8)
    A = np.arange(1024, dtype=np.int32) - 300
    for _ in range(2):  # zeroed per call: a second call gives the same
        Out = kernel(A)
        want = A.reshape(8, 128).sum(axis=1)
        assert Out.tolist() == want.tolist() + [int(want.sum())]
    assert kernel.get_kernel_source().count(".entry") == 2
