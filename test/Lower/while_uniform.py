# RUN: not %tl-opt --emit=simt %s 2>&1 | FileCheck %s
# The condition of a `while` loop whose body holds tile work (tile ops,
# T.Parallel / T.Pipelined loops, barriers, shared memory) must be the same in
# every thread of the block (lib/Lower/uniform.c): threads that leave the loop
# at different iterations would wait forever at a barrier the others no
# longer reach.  Each loop below breaks that rule: one located error each,
# naming the value, with a note where a stored value became per-thread.  A
# loop whose body is per-thread scalar work may have any condition
# (per_thread_ok: no error).
import tilelang.language as T


@T.prim_func
def bad_tid(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        S = T.alloc_shared((32,), "float32")
        # CHECK: while_uniform.py:[[@LINE+1]]:15: error: the condition of this 'while' loop may differ between the threads of the block: it reads 'T.get_thread_binding()', the thread index; its body holds tile operations or barriers that every thread must reach
        while T.get_thread_binding() < 3:
            T.copy(A[0], S)
            T.copy(S, B[0])


@T.prim_func
def bad_frag(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        F = T.alloc_fragment((32,), "float32")
        T.copy(A[0], F)
        # CHECK: while_uniform.py:[[@LINE+1]]:20: error: {{.*}} it reads 'F', a fragment element (each thread holds its own part of a fragment)
        while F[0] < 3.0:
            for j in T.Parallel(32):
                F[j] = F[j] + 1.0
        T.copy(F, B[0])


@T.prim_func
def bad_local(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32"), Idx: T.Tensor((32,), "int32")):
    with T.Kernel(1, threads=64) as bx:
        S = T.alloc_shared((32,), "float32")
        i = T.alloc_local((1,), "int32")
        F = T.alloc_fragment((32,), "int32")
        T.copy(Idx[0], F)
        for j in T.Parallel(32):
            i[0] = F[j]
        k = i[0] + 1
        # CHECK: while_uniform.py:[[@LINE+2]]:15: error: {{.*}} it reads 'k', a value computed from per-thread data
        # CHECK: while_uniform.py:[[@LINE-2]]:9: note: 'k' takes a per-thread value here
        while k < 4:
            T.copy(A[i[0] * 32], S)
            i[0] = i[0] + 1
            T.copy(S, B[0])


@T.prim_func
def per_thread_ok(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding()
        k = T.alloc_var("int32")
        k = 0
        while k < tx % 3:
            B[tx] = A[tx] + k
            k = k + 1


@T.prim_func
def in_parallel(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        for j in T.Parallel(128):
            k = T.alloc_var("int32")
            # CHECK: while_uniform.py:[[@LINE+1]]:13: error: a 'while' loop inside a T.Parallel loop is not lowered yet
            while k < 3:
                k = k + 1
            B[j] = A[j]
# CHECK-NOT: error:
