# REQUIRES: tl-run
# float8 GEMMs with promotion into a second accumulator on the Hopper path (issue 31): the kernels of TileLang's
# examples/deepseek_deepgemm/example_deepgemm_fp8_2xAcc.py (form="deepgemm": each k-tile's C_local, scaled by
# the per-row scales_a[m, k] and the per-128-block Scale_B, added into C_local_accum, block_M 64, block_K 128,
# 4 stages, T.use_swizzle) and examples/gemm_fp8/example_tilelang_gemm_fp8_2xAcc.py (form="interval": the
# promotion every 128 / block_K k-tiles under an if, a tail after the loop).  The loop body holds statements
# besides the copies and the T.gemm, so it takes the attention form of lib/Lower/Hopper/warp_specialize.c,
# whose block_M is 64 x the consumer warpgroups: the interval form at 64 x 128 runs on the Hopper path, and
# the example's own 128 x 128 on the kernel's 128 threads runs there on two consumer warpgroups (nothing in the
# kernel depends on its thread count: docs/hopper.md "More consumer threads than the kernel asks for").  Each
# run is the CPU SIMT executor checked against the reference evaluator.
# RUN: %tl-run --device=cpu --target=sm_90a --check --remarks %s 2>&1 | FileCheck %s --check-prefix=HOPPER
# RUN: %tl-run --device=cpu --target=sm_90a --check --remarks --schedule-seed=7 -D out_dtype=float32 -D M=192 -D N=384 -D K=384 %s 2>&1 | FileCheck %s --check-prefix=HOPPER
# RUN: %tl-run --device=cpu --target=sm_90a --check --remarks -D form=interval -D block_K=64 -D K=448 -D out_dtype=float32 %s 2>&1 | FileCheck %s --check-prefix=HOPPER
# RUN: %tl-run --device=cpu --target=sm_90a --check --remarks -D form=interval -D block_M=128 -D block_K=64 -D K=320 -D out_dtype=float32 -D dtype=float8_e5m2 %s 2>&1 | FileCheck %s --check-prefix=WIDE
# HOPPER: remark: T.Pipelined attention loop takes the Hopper path: {{.*}}T.gemm as wgmma over 1 consumer warpgroups of one m64 block each
# HOPPER: check: PASS
# WIDE: remark: T.Pipelined attention loop takes the Hopper path: {{.*}}T.gemm as wgmma over 2 consumer warpgroups of one m64 block each (256 threads where the kernel asks for 128
# WIDE: check: PASS
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def matmul(M=256, N=256, K=512, block_M=64, block_N=128, block_K=128, dtype="float8_e4m3", out_dtype="bfloat16",
           num_stages=4, form="deepgemm"):
    group_size = 128
    update_interval = 128 // block_K if block_K < 128 else 1

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype),
             scales_a: T.Tensor((M, T.ceildiv(K, group_size)), "float32"),
             scales_b: T.Tensor((T.ceildiv(N, group_size), T.ceildiv(K, group_size)), "float32"),
             C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_N, block_K), dtype)
            C_shared = T.alloc_shared((block_M, block_N), out_dtype)
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            C_local_accum = T.alloc_fragment((block_M, block_N), "float32")
            T.use_swizzle(panel_size=10)
            T.clear(C_local)
            T.clear(C_local_accum)
            K_iters = T.ceildiv(K, block_K)
            for k in T.Pipelined(K_iters, num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[bx * block_N, k * block_K], B_shared)
                if form == "deepgemm":
                    Scale_B = scales_b[bx * block_N // group_size, k]
                    T.gemm(A_shared, B_shared, C_local, transpose_B=True)
                    for i, j in T.Parallel(block_M, block_N):
                        C_local_accum[i, j] += C_local[i, j] * (scales_a[by * block_M + i, k] * Scale_B)
                    T.clear(C_local)
                else:
                    T.gemm(A_shared, B_shared, C_local, transpose_B=True)
                    if (k + 1) % update_interval == 0:
                        for i, j in T.Parallel(block_M, block_N):
                            C_local_accum[i, j] += C_local[i, j]
                        T.clear(C_local)
            if form != "deepgemm":
                if K_iters % update_interval != 0:
                    for i, j in T.Parallel(block_M, block_N):
                        C_local_accum[i, j] += C_local[i, j]
            T.copy(C_local_accum, C_shared)
            T.copy(C_shared, C[by * block_M, bx * block_N])

    return main
