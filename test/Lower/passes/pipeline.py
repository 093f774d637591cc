# RUN: %tl-opt --passes=pipeline %s | FileCheck %s
# Pass "pipeline" (lib/Lower/pipeline_loop.c) alone, 3 stages: the shared
# buffers written only by the loop's global copies gain a leading stage
# dimension of 3; a prologue issues stages 0 and 1 (guarded by the trip
# count), each committed as one group; the loop is T.serial, waits for
# group k (T.ptx_wait_group(1)), syncs, issues stage k + 2 into slot
# (k + 2) % 3 while k + 2 is in range, commits, and reads slot k % 3.
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64, 256), "float16"), B: T.Tensor((64, 32), "float16")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 32), "float16")
        acc = T.alloc_shared((64, 32), "float16")
        T.clear(acc)
        for k in T.Pipelined(8, num_stages=3):
            T.copy(A[0, k * 32], A_s)
            T.copy(A_s, acc)
        T.copy(acc, B)

# CHECK: A_s = T.alloc_shared((3, 64, 32), "float16")
# CHECK-NEXT: acc = T.alloc_shared((64, 32), "float16")
# CHECK: T.async_copy(A[0:64, 0:32], A_s[0, 0:64, 0:32])
# CHECK-NEXT: T.ptx_commit_group()
# CHECK: T.async_copy(A[0:64, 32:32 + 32], A_s[1, 0:64, 0:32])
# CHECK-NEXT: T.ptx_commit_group()
# CHECK-NEXT: for k in T.serial(8, annotations={"num_stages": 3}):
# CHECK-NEXT: T.ptx_wait_group(1)
# CHECK-NEXT: T.sync_threads()
# CHECK-NEXT: if k + 2 < 8:
# CHECK-NEXT: T.async_copy(A[0:64, (k + 2) * 32:(k + 2) * 32 + 32], A_s[(k + 2) % 3, 0:64, 0:32])
# CHECK-NEXT: T.ptx_commit_group()
# CHECK-NEXT: T.copy(A_s[k % 3, 0:64, 0:32], acc)
# CHECK-NOT: T.Pipelined
