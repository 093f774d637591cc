# RUN: %tl-opt --passes=barriers %s | FileCheck %s
# Pass "barriers" (lib/Lower/barrier.c) on a pipelined serial loop: the stage
# count the pipeline pass recorded (annotations={"num_stages": 2}) says that
# the copy into stage (k + 1) % 2 and the read of stage k % 2 touch different
# stages, so the barrier at the top of the iteration is the only one.  The
# same loop without the record gets a barrier between them: the pass reads
# the pipeline's stages from the loop, it does not guess them from the
# indices.
import tilelang.language as T


@T.prim_func
def staged(A: T.Tensor((4, 64, 64), "float16"), B: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((2, 64, 64), "float16")
        F = T.alloc_fragment((64, 64), "float16")
        T.copy(A[0, 0:64, 0:64], S[0, 0:64, 0:64])
        for k in T.serial(4, annotations={"num_stages": 2}):
            T.sync_threads()
            if k + 1 < 4:
                T.copy(A[k + 1, 0:64, 0:64], S[(k + 1) % 2, 0:64, 0:64])
            T.copy(S[k % 2, 0:64, 0:64], F)
        T.copy(F, B)


@T.prim_func
def plain(A: T.Tensor((4, 64, 64), "float16"), B: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((2, 64, 64), "float16")
        F = T.alloc_fragment((64, 64), "float16")
        T.copy(A[0, 0:64, 0:64], S[0, 0:64, 0:64])
        for k in T.serial(4):
            T.sync_threads()
            if k + 1 < 4:
                T.copy(A[k + 1, 0:64, 0:64], S[(k + 1) % 2, 0:64, 0:64])
            T.copy(S[k % 2, 0:64, 0:64], F)
        T.copy(F, B)

# CHECK-LABEL: def staged(
# CHECK: for k in T.serial(4, annotations={"num_stages": 2}):
# CHECK-NEXT: T.sync_threads()
# CHECK-NEXT: if k + 1 < 4:
# CHECK-NEXT: T.copy(A[k + 1, 0:64, 0:64], S[(k + 1) % 2, 0:64, 0:64])
# CHECK-NEXT: T.copy(S[k % 2, 0:64, 0:64], F)
# CHECK-LABEL: def plain(
# CHECK: for k in T.serial(4):
# CHECK-NEXT: T.sync_threads()
# CHECK-NEXT: if k + 1 < 4:
# CHECK-NEXT: T.copy(A[k + 1, 0:64, 0:64], S[(k + 1) % 2, 0:64, 0:64])
# CHECK-NEXT: T.sync_threads()
# CHECK-NEXT: T.copy(S[k % 2, 0:64, 0:64], F)
