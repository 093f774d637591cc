"""TileLang's TensorCoreIntrinEmitter (tilelang.cuda.intrinsics; TileLang's examples/gemm/example_gemm_intrinsics.py
builds its GEMM from it): ldmatrix_a / ldmatrix_b / mma / stmatrix over T.alloc_local fragments expand in
libtilelang's prelude (lib/Frontend/elab_prelude.c) to per-thread fragment loads, T.ptx_mma and per-thread
stores, mixed with T.Parallel copies in the same kernel.  Run by the CPU SIMT executor and checked against a
float64 NumPy GEMM; unsupported uses are located errors."""
import numpy as np
import pytest

import tilelang_ptx as tilelang
import tilelang_ptx.language as T
from tilelang_ptx.cuda.intrinsics import TensorCoreIntrinEmitter, get_swizzle_layout


@tilelang.jit(out_idx=-1, target="cpu")
def emitter_gemm(M, N, K, a_t=False, b_t=True, warp_col_tiles=32, out_dtype="float32", c_4d=True,
                 in_dtype="float16", frag_scope="local"):
    wr, wc, warp_rows_tiles, chunk = 2, 2, 32, 32
    n_dim = 16 if warp_col_tiles % 16 == 0 else 8
    bM, bN = wr * warp_rows_tiles, wc * warp_col_tiles
    emitter = TensorCoreIntrinEmitter(a_dtype=in_dtype, b_dtype=in_dtype, accum_dtype="float32", a_transposed=a_t,
                                      b_transposed=b_t, block_row_warps=wr, block_col_warps=wc,
                                      warp_row_tiles=warp_rows_tiles, warp_col_tiles=warp_col_tiles, chunk=chunk)
    a_shape = (K, M) if a_t else (M, K)
    b_shape = (N, K) if b_t else (K, N)

    @T.prim_func
    def main(A: T.Tensor(a_shape, in_dtype), B: T.Tensor(b_shape, in_dtype), C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=128) as (bx, by):
            A_s = T.alloc_shared((chunk, bM) if a_t else (bM, chunk), in_dtype)
            B_s = T.alloc_shared((bN, chunk) if b_t else (chunk, bN), in_dtype)
            C_s = T.alloc_shared((bM // 16, bN // n_dim, 16, n_dim) if c_4d else (bM, bN), out_dtype)
            A_l = T.alloc_local((emitter.warp_rows * emitter.local_size_a,), in_dtype)
            B_l = T.alloc_local((emitter.warp_cols * emitter.local_size_b,), in_dtype)
            C_l = T.alloc_fragment((emitter.warp_rows * emitter.warp_cols * emitter.local_size_out,), "float32",
                                   frag_scope)
            T.clear(C_l)
            for ko in T.Pipelined(K // chunk, num_stages=2):
                if a_t:
                    for k, i in T.Parallel(chunk, bM):
                        A_s[k, i] = A[ko * chunk + k, by * bM + i]
                else:
                    for i, k in T.Parallel(bM, chunk):
                        A_s[i, k] = A[by * bM + i, ko * chunk + k]
                if b_t:
                    for j, k in T.Parallel(bN, chunk):
                        B_s[j, k] = B[bx * bN + j, ko * chunk + k]
                else:
                    for k, j in T.Parallel(chunk, bN):
                        B_s[k, j] = B[ko * chunk + k, bx * bN + j]
                for ki in T.serial(chunk // 16):
                    emitter.ldmatrix_a(A_l, A_s, ki)
                    emitter.ldmatrix_b(B_l, B_s, ki)
                    emitter.mma(A_l, B_l, C_l)
            emitter.stmatrix(C_l, C_s)
            for i, j in T.Parallel(bM, bN):
                if c_4d:
                    C[by * bM + i, bx * bN + j] = C_s[i // 16, j // n_dim, i % 16, j % n_dim]
                else:
                    C[by * bM + i, bx * bN + j] = C_s[i, j]

    return main


@pytest.mark.parametrize("a_t,b_t,wct,out_dtype,c_4d", [
    (False, True, 32, "float32", True),   # the example's configuration (n8 pairs of each 16 columns)
    (False, True, 32, "float16", True),   # its float16 output
    (True, False, 32, "float32", False),  # transposed A, plain B, a 2-D C tile
    (False, False, 8, "float32", True),   # warp_col_tiles 8: one n8 mma per fragment
])
def test_emitter_gemm(a_t, b_t, wct, out_dtype, c_4d):
    M, N, K = 128, 4 * wct, 64
    rng = np.random.default_rng(1)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((N, K)).astype(np.float16)
    A = np.ascontiguousarray(a.T) if a_t else a
    B = b if b_t else np.ascontiguousarray(b.T)
    C = emitter_gemm(M, N, K, a_t, b_t, wct, out_dtype, c_4d)(A, B)
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    tol = 1e-2 if out_dtype == "float16" else 1e-4
    np.testing.assert_allclose(C.astype(np.float64), ref, atol=tol, rtol=tol)


def test_emitter_errors():
    with pytest.raises(tilelang.CompileError, match="only 16-bit operands"):
        emitter_gemm(128, 128, 64, in_dtype="float32")
    with pytest.raises(tilelang.CompileError, match="the accumulator must be a T.alloc_local buffer"):
        emitter_gemm(128, 128, 64, frag_scope="local.fragment")


def test_get_swizzle_layout():
    # 64-byte rows of float16 (32 elements): 16-byte chunks XOR-permuted by (row % 8) // 2
    assert get_swizzle_layout(0, 9, 32, "float16") == (0, 0, 9)
    assert get_swizzle_layout(2, 9, 32, "float16") == (0, 2, 1)
    assert get_swizzle_layout(7, 31, 32, "float16") == (0, 7, 7)
