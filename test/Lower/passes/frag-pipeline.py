# RUN: %tl-opt --passes=pipeline,barriers,layout-inference,lower-tile-ops %s > %t.simt
# RUN: %tl-opt --passes=frag-pipeline %t.simt | FileCheck %s
# Pass "frag-pipeline" (lib/Lower/frag_pipeline.c) alone, on SIMT IR text:
# the pipelined GEMM loop (2 k-steps of 16 per iteration) gets two fragment
# buffers per operand (A_frag, B_frag: registers 0..15 and 16..31), hoisted
# out of the loop; k-step 0 of iteration 0 is loaded before the loop; in the
# loop, k-step 1 loads into buffer 1 and the async copies issue while the
# mma of k-step 0 run from buffer 0; then the wait and barrier move in front
# of the load of the next iteration's k-step 0 (stage min(k + 1, 3) % 2) and
# the last mma run from buffer 1.
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64, 128), "float16"), B: T.Tensor((128, 64), "float16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 32), "float16")
        B_s = T.alloc_shared((32, 64), "float16")
        C_f = T.alloc_fragment((64, 64), "float32")
        T.clear(C_f)
        for k in T.Pipelined(4, num_stages=2):
            T.copy(A[0, k * 32], A_s)
            T.copy(B[k * 32, 0], B_s)
            T.gemm(A_s, B_s, C_f)
        T.copy(C_f, C)

# CHECK: A_frag = T.alloc_local((32,), "float16")
# CHECK-NEXT: B_frag = T.alloc_local((32,), "float16")
# CHECK-NOT: A_regs
# CHECK: T.ptx_wait_group(0)
# CHECK-NEXT: T.sync_threads()
# CHECK-NEXT: for [[M0:[a-z0-9_]+]] in T.unroll(2):
# CHECK-NEXT: T.ptx_ldmatrix(A_frag, [[M0]] * 8, A_s, a_col // 32 * 2048 + {{.*}}, 4, False)
# CHECK: T.ptx_ldmatrix(B_frag, {{.*}}, 4, True)
# CHECK-NEXT: for k in T.serial(4):
# CHECK-NEXT: for [[M1:[a-z0-9_]+]] in T.unroll(2):
# CHECK-NEXT: T.ptx_ldmatrix(A_frag, [[M1]] * 8 + 16, A_s, k % 2 * 2048 + {{.*}}, 4, False)
# CHECK: T.ptx_ldmatrix(B_frag, {{.*}} * 8 + 16, B_s, k % 2 * 2048 + {{.*}}, 4, True)
# CHECK-NEXT: if k + 1 < 4:
# CHECK: T.ptx_commit_group()
# CHECK-NEXT: for [[I0:[a-z0-9_]+]] in T.unroll(2):
# CHECK-NEXT: for [[Q0:[a-z0-9_]+]] in T.unroll(4):
# CHECK-NEXT: T.ptx_mma(A_frag, [[I0]] * 8, B_frag, [[Q0]] * 4, C_f, ([[I0]] * 4 + [[Q0]]) * 4, "m16n8k16")
# CHECK-NEXT: T.ptx_wait_group(0)
# CHECK-NEXT: T.sync_threads()
# CHECK-NEXT: for [[M2:[a-z0-9_]+]] in T.unroll(2):
# CHECK-NEXT: T.ptx_ldmatrix(A_frag, [[M2]] * 8, A_s, T.min(k + 1, 3) % 2 * 2048 + {{.*}}, 4, False)
# CHECK: T.ptx_ldmatrix(B_frag, {{.*}}, B_s, T.min(k + 1, 3) % 2 * 2048 + {{.*}}, 4, True)
# CHECK-NEXT: for [[I1:[a-z0-9_]+]] in T.unroll(2):
# CHECK-NEXT: for [[Q1:[a-z0-9_]+]] in T.unroll(4):
# CHECK-NEXT: T.ptx_mma(A_frag, [[I1]] * 8 + 16, B_frag, [[Q1]] * 4 + 16, C_f, ([[I1]] * 4 + [[Q1]]) * 4, "m16n8k16")
# CHECK-NOT: T.ptx_mma
