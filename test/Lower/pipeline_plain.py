# RUN: %tl-opt --emit=simt -D num_stages=0 %examples/gemm.py | FileCheck %s
# RUN: %tl-opt --emit=simt -D num_stages=1 %examples/gemm.py | FileCheck %s
# num_stages 0 and 1: a plain loop with synchronous 16-byte vector copies,
# a barrier before the gemm reads the tiles (RAW) and one at the top of the
# next iteration before they are overwritten (loop-carried WAR).

# CHECK: A_shared = T.alloc_shared((4096,), "float16")
# CHECK: for ko in T.serial(32):
# CHECK-NEXT: T.sync_threads()
# CHECK-NEXT: for [[Q:vq[_0-9]*]] in T.unroll(4):
# CHECK-NEXT: A_shared[T.Ramp({{.*}}, 1, 8)] = A[by * 128 + {{.*}}, T.Ramp(ko * 32 + {{.*}}, 1, 8)]
# CHECK: B_shared[T.Ramp({{.*}}, 1, 8)] = B[ko * 32 + {{.*}}, T.Ramp(bx * 128 + {{.*}}, 1, 8)]
# CHECK-NEXT: T.sync_threads()
# CHECK-NEXT: A_regs = T.alloc_local
# CHECK-NOT: ptx_cp_async
# CHECK-NOT: ptx_wait_group
