# TileLang's TensorCoreIntrinEmitter (tilelang.cuda.intrinsics), from libtilelang's prelude
# (lib/Frontend/elab_prelude.c): ldmatrix_a / ldmatrix_b as per-thread loads of the m16n8k16 fragments,
# mma as T.ptx_mma (two n8 halves of each 16 columns), stmatrix as per-thread stores; T.Parallel copies in
# the same per-thread kernel keep their tile meaning. The reference evaluator does not run such a kernel
# (python/tests/test_mma_emitter.py checks it on the SIMT executor against NumPy).
# RUN: %tl-opt --emit=tir %s | FileCheck %s
# RUN: %tl-opt --emit=simt %s | FileCheck %s --check-prefix=SIMT
# RUN: not %tl-opt -D in_dtype='"float32"' %s 2>&1 | FileCheck %s --check-prefix=DTYPE
# RUN: not %tl-opt -D acc_scope='"local.fragment"' %s 2>&1 | FileCheck %s --check-prefix=FRAG
# RUN: not %tl-opt -D bad_c=1 %s 2>&1 | FileCheck %s --check-prefix=SHAPE
# REQUIRES: tl-run
# RUN: not %tl-run --device=cpu --check %s 2>&1 | FileCheck %s --check-prefix=REF
# CHECK: for ki in T.serial(2):
# CHECK-NEXT: lane = T.get_thread_binding() % 32
# CHECK: m = lane // 4 + 8 * (j % 4 // 2)
# CHECK-NEXT: k = lane % 4 * 2 + j % 2 + 8 * (j // 4)
# CHECK-NEXT: A_l[i * 8 + j] = A_s[warp_m * 32 + i * 16 + m, ki * 16 + k]
# CHECK: n = lane_1 // 4 + 8 * (j // 4)
# CHECK-NEXT: k = lane_1 % 4 * 2 + j % 2 + 8 * (j % 4 // 2)
# CHECK-NEXT: B_l[i * 8 + j] = B_s[warp_n_1 * 32 + i * 16 + n, ki * 16 + k]
# CHECK: T.ptx_mma(A_l, i * 8, B_l, j * 8, C_l, (i * 2 + j) * 8, "m16n8k16")
# CHECK-NEXT: T.ptx_mma(A_l, i * 8, B_l, j * 8 + 4, C_l, (i * 2 + j) * 8 + 4, "m16n8k16")
# CHECK: C_s[warp_m * 2 + i, warp_n * 2 + j, r, c] = C_l[(i * 2 + j) * 8 + l]
# SIMT: T.ptx_mma(
# DTYPE: <tilelang.cuda.intrinsics>:{{[0-9]+}}:{{[0-9]+}}: error: assertion failed: TensorCoreIntrinEmitter: only 16-bit operands (float16, bfloat16: mma.sync m16n8k16) are supported yet
# DTYPE: mma_emitter.py:42:15: note: in compile-time function 'TensorCoreIntrinEmitter', called here
# FRAG: error: assertion failed: TensorCoreIntrinEmitter: the accumulator must be a T.alloc_local buffer (fragments are not supported yet)
# FRAG: mma_emitter.py:64:21: note: in compile-time function 'mma', called here
# SHAPE: error: assertion failed: TensorCoreIntrinEmitter.stmatrix: C must be a 2-D or 4-D shared buffer
# REF: mma_emitter.py:57:17: error: T.Parallel in per-thread code: the reference evaluator runs a per-thread kernel one thread at a time
import tilelang
import tilelang.language as T
from tilelang.cuda.intrinsics import TensorCoreIntrinEmitter

in_dtype = "float16"
acc_scope = "local"
bad_c = 0


@tilelang.jit(out_idx=-1)
def gemm(M=128, N=128, K=64):
    emitter = TensorCoreIntrinEmitter(a_dtype=in_dtype, b_dtype=in_dtype, accum_dtype="float32",
                                      b_transposed=True, block_row_warps=2, block_col_warps=2,
                                      warp_row_tiles=32, warp_col_tiles=32, chunk=32)

    @T.prim_func
    def main(A: T.Tensor((M, K), in_dtype), B: T.Tensor((N, K), in_dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, 64), T.ceildiv(M, 64), threads=128) as (bx, by):
            A_s = T.alloc_shared((64, 32), in_dtype)
            B_s = T.alloc_shared((64, 32), in_dtype)
            C_s = T.alloc_shared((4, 4, 16) if bad_c else (4, 4, 16, 16), "float32")
            A_l = T.alloc_local((16,), in_dtype)
            B_l = T.alloc_local((16,), in_dtype)
            C_l = T.alloc_fragment((32,), "float32", acc_scope)
            T.clear(C_l)
            for ko in T.Pipelined(K // 32, num_stages=2):
                for i, k in T.Parallel(64, 32):
                    A_s[i, k] = A[by * 64 + i, ko * 32 + k]
                for j, k in T.Parallel(64, 32):
                    B_s[j, k] = B[bx * 64 + j, ko * 32 + k]
                for ki in T.serial(2):
                    emitter.ldmatrix_a(A_l, A_s, ki)
                    emitter.ldmatrix_b(B_l, B_s, ki)
                    emitter.mma(A_l, B_l, C_l)
            emitter.stmatrix(C_l, C_s)
            for i, j in T.Parallel(64, 64):
                C[by * 64 + i, bx * 64 + j] = C_s[i // 16, j // 16, i % 16, j % 16]

    return main
