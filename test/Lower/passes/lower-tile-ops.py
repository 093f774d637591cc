# RUN: %tl-opt --passes=barriers,layout-inference,lower-tile-ops %s | FileCheck %s
# RUN: %tl-opt --passes=barriers,layout-inference,lower-tile-ops %s > %t.simt
# RUN: %tl-opt %t.simt | diff %t.simt -
# Pass "lower-tile-ops" (lib/Lower/lower_tile.c with lower_shared_copy.c,
# lower_gemm.c): after layout inference, every tile op becomes per-thread
# SIMT IR (docs/simt-ir.md), which parses back as it prints.  Here, on 128
# threads (4 warps, 2 x 2 over the 64 x 64 accumulator, 32 x 32 each):
# shared tiles become flat 1-D buffers, filled by 16-byte vector stores at
# XOR-swizzled offsets (docs/layouts.md "Shared-memory swizzles"); C_f becomes 32 registers
# per thread (the mma.sync m16n8 C layout: 2 m-tiles x 4 n-tiles x 4),
# cleared two at a time; T.gemm becomes, per k-step of 16, ldmatrix.x4 of A
# (2 m-tiles) and transposed ldmatrix of B, then 2 x 4 mma.sync m16n8k16;
# the C store writes pairs of columns from the registers of that layout.
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64, 32), "float16"), B: T.Tensor((32, 64), "float16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 32), "float16")
        B_s = T.alloc_shared((32, 64), "float16")
        C_f = T.alloc_fragment((64, 64), "float32")
        T.clear(C_f)
        T.copy(A, A_s)
        T.copy(B, B_s)
        T.gemm(A_s, B_s, C_f)
        T.copy(C_f, C)

# CHECK: A_s = T.alloc_shared((2048,), "float16")
# CHECK-NEXT: B_s = T.alloc_shared((2048,), "float16")
# CHECK-NEXT: C_f = T.alloc_local((32,), "float32")
# CHECK: C_f[T.Ramp((mi * 4 + nj) * 4 + h * 2, 1, 2)] = T.Broadcast(0.0, 2)
# CHECK: A_s[T.Ramp({{.*}} ^ {{.*}}, 1, 8)] = A[vq * 32 + T.get_thread_binding(0) // 4, T.Ramp(T.get_thread_binding(0) % 4 * 8, 1, 8)]
# CHECK: T.sync_threads()
# CHECK: warp_m = T.get_thread_binding(0) // 32 % 2
# CHECK-NEXT: warp_n = T.get_thread_binding(0) // 64
# CHECK: for kk in T.unroll(2):
# CHECK-NEXT: for mi_1 in T.unroll(2):
# CHECK-NEXT: T.ptx_ldmatrix(A_regs, mi_1 * 8, A_s, {{.*}}, 4, False)
# CHECK: T.ptx_ldmatrix(B_regs, nj_1 * 8, B_s, {{.*}}, 4, True)
# CHECK: for mi_2 in T.unroll(2):
# CHECK-NEXT: for nq in T.unroll(4):
# CHECK-NEXT: T.ptx_mma(A_regs, mi_2 * 8, B_regs, nq * 4, C_f, (mi_2 * 4 + nq) * 4, "m16n8k16")
# CHECK: C[T.get_thread_binding(0) // 32 % 2 * 32 + T.get_thread_binding(0) % 32 // 4 + (mi_3 * 16 + h_1 * 8), T.Ramp({{.*}}, 1, 2)] = C_f[T.Ramp((mi_3 * 4 + nj_2) * 4 + h_1 * 2, 1, 2)]
# CHECK-NOT: T.gemm
# CHECK-NOT: T.copy
