# RUN: not %tl-opt --emit=simt --kernel=part_warp %s 2>&1 | FileCheck %s --check-prefix=PART
# RUN: %tl-opt --kernel=block_first %s | sed 's/T.thread_range(32, 64)/T.thread_range(16, 64)/' > %t.tir
# RUN: not %tl-opt --emit=simt %t.tir 2>&1 | FileCheck %s --check-prefix=WARPS
# RUN: not %tl-opt --emit=simt --kernel=cross_frag %s 2>&1 | FileCheck %s --check-prefix=CROSS
# RUN: not %tl-opt --emit=simt --kernel=tid_inside %s 2>&1 | FileCheck %s --check-prefix=TID
# RUN: not %tl-opt --emit=simt --kernel=dyn_bound %s 2>&1 | FileCheck %s --check-prefix=DYN
# RUN: %tl-opt --emit=simt --kernel=block_first %s | FileCheck %s --check-prefix=BLOCK
# Branches on the thread index that hold tile work (thread-range scopes,
# docs/language.md "Branches on the thread index"): what is not lowered is
# a located error (a range of part of a warp stays per-thread code, where a
# T.Parallel is refused; written as T.thread_range in tile IR, refused), never a wrong result; and the barrier before a scope
# that reads what every thread wrote is the block's, not the scope's.
# PART: thread_range_errors.py:31:17: error: T.Parallel in per-thread code
# WARPS: :8:12: error: thread-range scope over threads 16 to 63 (of the kernel's 64): its tile work needs whole warps
# CROSS: thread_range_errors.py:45:19: error: fragment 'f' is used in this branch on the thread index, whose tile work runs on its own threads, and outside it
# TID: thread_range_errors.py:56:39: error: thread-range scope over threads 32 to 63 (of the kernel's 64): reading the thread index inside a branch that holds tile work is not supported yet
# DYN: thread_range_errors.py:71:17: error: T.Parallel in per-thread code
# BLOCK: T.sync_threads()
# BLOCK-NEXT: if T.get_thread_binding(0) >= 32 and T.get_thread_binding(0) < 64:
import tilelang
import tilelang.language as T


@tilelang.jit
def part_warp(N=64):
    @T.prim_func
    def part_main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            tx = T.get_thread_binding()
            if tx < 16:
                for i in T.Parallel(N):
                    B[i] = A[i]

    return part_main


@tilelang.jit
def cross_frag(N=64):
    @T.prim_func
    def cross_main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            tx = T.get_thread_binding()
            f = T.alloc_fragment((N,), "float32")
            T.copy(A, f)
            if tx < 32:
                T.copy(f, B)

    return cross_main


@tilelang.jit
def tid_inside(N=64):
    @T.prim_func
    def tid_main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            if T.get_thread_binding() >= 32:
                for i in T.Parallel(N):
                    B[i] = A[i]
                B[T.get_thread_binding()] = 0.0

    return tid_main


@tilelang.jit
def dyn_bound(N=64):
    @T.prim_func
    def dyn_main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), n: T.int32):
        with T.Kernel(1, threads=64) as bx:
            tx = T.get_thread_binding()
            if tx < n:
                for i in T.Parallel(N):
                    B[i] = A[i]

    return dyn_main


@tilelang.jit
def block_first(N=64):
    @T.prim_func
    def block_main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            s = T.alloc_shared((N,), "float32")
            T.copy(A, s)
            if T.get_thread_binding() >= 32:
                for i in T.Parallel(N):
                    B[i] = s[N - 1 - i]

    return block_main
