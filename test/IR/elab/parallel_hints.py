# RUN: %tl-opt --kernel=hints %s | FileCheck %s
# RUN: not %tl-opt --kernel=bad_key %s 2>&1 | FileCheck %s --check-prefix=KEY
# RUN: not %tl-opt --kernel=bad_async %s 2>&1 | FileCheck %s --check-prefix=ASYNC
# RUN: not %tl-opt --kernel=layout %s 2>&1 | FileCheck %s --check-prefix=LAYOUT
# RUN: not %tl-opt --kernel=bad_regs %s 2>&1 | FileCheck %s --check-prefix=REGS
# T.Parallel's hints (tilelang/language/loop.py): prefer_async (a bool),
# coalesced_width (an int) and annotations (a dict of the known keys) are
# accepted and change nothing (the loop stores synchronously: the values
# TileLang's cp.async copies give once waited for); an unknown annotation,
# a prefer_async that is no bool and loop_layout are refused at their
# location.  T.annotate_producer_reg_dealloc / T.annotate_consumer_reg_alloc
# (register counts of TileLang's automatic warp specialisation) are checked
# (24 to 240) and leave no statement.
import tilelang.language as T


@T.prim_func
def hints(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((64, 64), "float16")
        T.annotate_producer_reg_dealloc()
        T.annotate_consumer_reg_alloc(reg_count=232)
        for i, j in T.Parallel(64, 64, prefer_async=True, annotations={"parallel_async_without_async_commit_wait": True}):
            S[i, j] = A[i, j]
        for i, j in T.Parallel(64, 64, coalesced_width=8, prefer_async=None):
            B[i, j] = S[i, j]


# CHECK: with T.Kernel(1, threads=128) as bx:
# CHECK-NEXT: S = T.alloc_shared((64, 64), "float16")
# CHECK-NEXT: for i, j in T.Parallel(64, 64):
# CHECK-NEXT: S[i, j] = A[i, j]
# CHECK-NEXT: for i, j in T.Parallel(64, 64):
# CHECK-NEXT: B[i, j] = S[i, j]


@T.prim_func
def bad_key(A: T.Tensor((64,), "float16")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(64, annotations={"pragma_unroll_explicit": True}):
            A[i] = 0


# KEY: parallel_hints.py:[[@LINE-4]]:46: error: T.Parallel: the annotation string 'pragma_unroll_explicit' is not supported (known: parallel_async_without_async_commit_wait, parallel_prefer_async)


@T.prim_func
def bad_async(A: T.Tensor((64,), "float16"), n: T.int32):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(64, prefer_async=n > 0):
            A[i] = 0


# ASYNC: parallel_hints.py:[[@LINE-4]]:46: error: T.Parallel: prefer_async must be a compile-time bool


@T.prim_func
def layout(A: T.Tensor((64,), "float16")):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(64, loop_layout=None):
            A[i] = 0


# LAYOUT: parallel_hints.py:[[@LINE-4]]:33: error: unknown keyword 'loop_layout' for T.Parallel


@T.prim_func
def bad_regs(A: T.Tensor((64,), "float16")):
    with T.Kernel(1, threads=128) as bx:
        T.annotate_consumer_reg_alloc(256)
        A[0] = 0


# REGS: parallel_hints.py:[[@LINE-4]]:39: error: T.annotate_consumer_reg_alloc: a register count must be 24 to 240, got 256
