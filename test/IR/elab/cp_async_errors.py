# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# What TileLang's T.ptx_cp_async(dst_ptr, src_ptr, num_elems[, predicate]) and
# T.cp_async_barrier_noinc(barrier) refuse (lib/Frontend/elab_cp_async.c,
# elab_ws.c), each at its location: an operand that is not T.access_ptr, a
# destination outside shared memory, a source outside global memory, a copy
# that is not 4, 8 or 16 bytes on both sides, ignore_last_ndim, a bad
# access_type; a noinc barrier that is not one of T.alloc_barrier, and a
# missing one.
import tilelang.language as T


@T.prim_func
def operands(A: T.Tensor((64,), "float16"), B: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((64,), "float16")
        L = T.alloc_local((8,), "float16")
        bar = T.alloc_barrier(128)
        T.ptx_cp_async(S[0], T.access_ptr(A[0], "r", 8), 8)
        T.ptx_cp_async(T.access_ptr(L[0], "w", 8), T.access_ptr(A[0], "r", 8), 8)
        T.ptx_cp_async(T.access_ptr(S[0], "w", 8), T.access_ptr(S[8], "r", 8), 8)
        T.ptx_cp_async(T.access_ptr(S[0], "w", 3), T.access_ptr(A[0], "r", 3), 3)
        T.ptx_cp_async(T.access_ptr(S[0], "w", 4), T.access_ptr(B[0], "r", 4), 4)
        T.ptx_cp_async(T.access_ptr(S[0], "w", 8, ignore_last_ndim=1), T.access_ptr(A[0], "r", 8), 8)
        T.ptx_cp_async(T.access_ptr(S[0], "x", 8), T.access_ptr(A[0], "r", 8), 8)
        T.ptx_cp_async(T.access_ptr(S[0], "w", 8), T.access_ptr(A[0], "r", 8))
        T.cp_async_barrier_noinc(S[0])
        T.cp_async_barrier_noinc()
        T.cp_async_barrier_noinc(bar)


# CHECK: cp_async_errors.py:18:24: error: T.ptx_cp_async: the destination operand must be T.access_ptr(<shared buffer>[...], "w", ...)
# CHECK: cp_async_errors.py:19:37: error: T.ptx_cp_async: the destination operand must point into a shared buffer, got a region of buffer 'L'
# CHECK: cp_async_errors.py:20:65: error: T.ptx_cp_async: the source operand must point into a global tensor, got a region of buffer 'S'
# CHECK: cp_async_errors.py:21:80: error: T.ptx_cp_async: num_elems = 3 copies 48 bits into 'S' (float16) and 48 bits from 'A' (float16); cp.async needs the same 4, 8 or 16 bytes on both sides
# CHECK: cp_async_errors.py:22:80: error: T.ptx_cp_async: num_elems = 4 copies 64 bits into 'S' (float16) and 128 bits from 'B' (float32); cp.async needs the same 4, 8 or 16 bytes on both sides
# CHECK: cp_async_errors.py:23:68: error: T.access_ptr: ignore_last_ndim=1 is not supported in a T.ptx_cp_async operand
# CHECK: cp_async_errors.py:24:43: error: T.access_ptr: access_type must be "r", "w" or "rw", got string 'x'
# CHECK: cp_async_errors.py:25:9: error: T.ptx_cp_async: num_elems (the third argument) is missing
# CHECK: cp_async_errors.py:26:34: error: T.cp_async_barrier_noinc expects a barrier of T.alloc_barrier (bars or bars[i]), got a region of buffer 'S'
# CHECK: cp_async_errors.py:27:9: error: T.cp_async_barrier_noinc needs a barrier
