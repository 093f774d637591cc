# REQUIRES: tl-run
# float8 GEMM on the Hopper path (issue 31): the kernel of TileLang's examples/gemm_fp8/example_tilelang_gemm_fp8.py
# (A (M, K), B (N, K), T.gemm(A_shared, B_shared, C_local, transpose_B=True), 128x128x64, 3 stages, 128 threads,
# C stored as float8) lowered for sm_90a: TMA loads of the 8-bit tiles into 64/128-byte swizzled images and
# wgmma.mma_async m64nNk32 .e4m3/.e5m2 (K-major operands only), run by the CPU SIMT executor against the
# reference evaluator (both compute each k-chunk of 32 exact in float64, rounded once to float32).  Cases:
# e4m3 as the example, e5m2 with block_K 128 (the 128-byte swizzle) on 2 stages, A e4m3 with B e5m2 and a
# float32 C on a ragged shape (TMA's zero fill), several tiles a block (--sms=2: the staged st.global epilogue
# of an 8-bit C), two consumer warpgroups at 128x256, block_K 32 on 4 stages, stream-K's last wave; NN (B
# stored K x N) stays on mma.sync with a remark (wgmma reads 8-bit operands K-major only).  The lowering and
# the PTX: test/Lower/warp_specialize_fp8.test; ptxas: ptxas/lang_ops.
# RUN: %tl-run --device=cpu --target=sm_90a --check --remarks %s 2>&1 | FileCheck %s --check-prefix=HOPPER
# RUN: %tl-run --device=cpu --target=sm_90a --check --remarks --schedule-seed=7 -D dtype=float8_e5m2 -D block_K=128 -D num_stages=2 %s 2>&1 | FileCheck %s --check-prefix=HOPPER
# RUN: %tl-run --device=cpu --target=sm_90a --check --remarks -D dtype_b=float8_e5m2 -D out_dtype=float32 -D M=200 -D N=264 -D K=160 %s 2>&1 | FileCheck %s --check-prefix=HOPPER
# RUN: %tl-run --device=cpu --target=sm_90a --check --remarks --sms=2 -D M=512 -D N=512 -D K=192 -D dtype=float8_e5m2 %s 2>&1 | FileCheck %s --check-prefix=HOPPER
# RUN: %tl-run --device=cpu --target=sm_90a --check --remarks -D block_N=256 -D threads=256 -D N=512 -D K=384 %s 2>&1 | FileCheck %s --check-prefix=HOPPER2
# RUN: %tl-run --device=cpu --target=sm_90a --check --remarks -D block_K=32 -D num_stages=4 -D out_dtype=bfloat16 %s 2>&1 | FileCheck %s --check-prefix=HOPPER
# RUN: %tl-run --device=cpu --target=sm_90a --check --remarks --pass-config=tl.enable_stream_k --sms=3 -D M=256 -D N=512 -D K=256 -D block_N=256 -D threads=256 -D out_dtype=bfloat16 %s 2>&1 | FileCheck %s --check-prefix=SK
# RUN: %tl-run --device=cpu --target=sm_90a --check --remarks -D trans_B=False -D M=128 -D N=128 -D K=128 %s 2>&1 | FileCheck %s --check-prefix=NN
# HOPPER: remark: T.Pipelined GEMM loop takes the Hopper path: {{.*}}T.gemm as wgmma over 1 consumer warpgroups
# HOPPER: check: PASS
# HOPPER2: remark: T.Pipelined GEMM loop takes the Hopper path: {{.*}}T.gemm as wgmma over 2 consumer warpgroups
# HOPPER2: check: PASS
# SK: stream-K: 1 whole waves of 3 tiles, then the last 1 tiles
# SK: check: PASS
# NN: remark: T.Pipelined loop stays on the cp.async + mma.sync path: a float8 T.gemm's operands are not both K-major (wgmma reads 8-bit operands K-major only: A as (M, K) without transpose_A, B as (N, K) with transpose_B=True)
# NN: check: PASS
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def matmul(M=256, N=256, K=256, block_M=128, block_N=128, block_K=64, dtype="float8_e4m3", dtype_b=None,
           out_dtype=None, num_stages=3, threads=128, trans_B=True):
    dtype_b = dtype_b or dtype
    out_dtype = out_dtype or dtype
    B_shape = (N, K) if trans_B else (K, N)
    B_tile = (block_N, block_K) if trans_B else (block_K, block_N)

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor(B_shape, dtype_b), C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared(B_tile, dtype_b)
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                if trans_B:
                    T.copy(B[bx * block_N, k * block_K], B_shared)
                else:
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=trans_B)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
