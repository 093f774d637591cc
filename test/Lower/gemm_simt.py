# RUN: %tl-opt --emit=simt %s | FileCheck %s
# T.gemm (f16 in, f32 accumulate) with shared operands filled by T.Parallel:
# per warp ldmatrix.x4 of A, ldmatrix.x4.trans of B (two n8 tiles each), then
# the mma.sync m16n8k16 calls; the accumulator is the mma C layout (2x2 warps
# of 32x32, 32 registers per thread) and is stored as pairs of columns.
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 64), "float16")
        B_s = T.alloc_shared((64, 64), "float16")
        C_f = T.alloc_fragment((64, 64), "float32")
        for i, k in T.Parallel(64, 64):
            A_s[i, k] = A[i, k]
        for k, j in T.Parallel(64, 64):
            B_s[k, j] = B[k, j]
        T.gemm(A_s, B_s, C_f, clear_accum=True)
        T.copy(C_f, C)

# CHECK: A_s = T.alloc_shared((4096,), "float16")
# CHECK: B_s = T.alloc_shared((4096,), "float16")
# CHECK: C_f = T.alloc_local((32,), "float32")
# CHECK: A_regs = T.alloc_local((16,), "float16")
# CHECK: B_regs = T.alloc_local((16,), "float16")
# CHECK: lane = T.get_thread_binding(0) % 32
# CHECK: warp_m = T.get_thread_binding(0) // 32 % 2
# CHECK: warp_n = T.get_thread_binding(0) // 64
# CHECK: for r in T.unroll(32):
# CHECK-NEXT: C_f[r] = 0.0
# CHECK: for kk in T.unroll(4):
# CHECK-NEXT: for [[MI:mi[_0-9]*]] in T.unroll(2):
# CHECK-NEXT: T.ptx_ldmatrix(A_regs, [[MI]] * 8, A_s, {{.*}} ^ a_row % 8) * 8 + a_col % 8, 4, False)
# CHECK-NEXT: for [[NJ:nj[_0-9]*]] in T.unroll(2):
# CHECK-NEXT: T.ptx_ldmatrix(B_regs, [[NJ]] * 8, B_s, {{.*}} ^ b_row % 8) * 8 + b_col % 8, 4, True)
# CHECK-NEXT: for [[M2:mi[_0-9]*]] in T.unroll(2):
# CHECK-NEXT: for nq in T.unroll(4):
# CHECK-NEXT: T.ptx_mma(A_regs, [[M2]] * 8, B_regs, nq * 4, C_f, ([[M2]] * 4 + nq) * 4, "m16n8k16")
# CHECK: C[{{.*}}, T.Ramp({{.*}}, 1, 2)] = C_f[T.Ramp(({{mi[_0-9]*}} * 4 + {{nj[_0-9]*}}) * 4 + {{h[_0-9]*}} * 2, 1, 2)]
# CHECK-NOT: T.gemm
