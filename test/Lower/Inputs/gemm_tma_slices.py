# GEMMs whose TMA-loaded operands are slices of higher-rank tensors (test/Lower/tma-slices.test):
#   form="batch": A is (batch, M, K), the tile A[b_index, m rows, k cols] -- (1, rows, cols) at a fixed,
#                 non-zero batch index; B is (K, N)
#   form="heads": A as for "batch"; B is (K, heads, N), the tile B[k rows, h_index, n cols] --
#                 (rows, 1, cols): a unit dimension between the tile's rows and columns (BSHD's form)
#   form="last":  A is (M, K, 2), the tile A[m rows, k cols, 1] -- the columns are not the tensor's last
#                 dimension, which a TMA box cannot take (the loop stays on cp.async + mma.sync)
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def matmul(M=256, N=256, K=256, batch=3, b_index=2, heads=4, h_index=1, form="batch", block_M=128, block_N=128,
           block_K=64, num_stages=2, threads=256, dtype="float16", accum_dtype="float32"):
    a_shape = (M, K, 2) if form == "last" else (batch, M, K)
    b_shape = (K, heads, N) if form == "heads" else (K, N)

    @T.prim_func
    def main(A: T.Tensor(a_shape, dtype), B: T.Tensor(b_shape, dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                if form == "last":
                    T.copy(A[by * block_M:(by + 1) * block_M, ko * block_K:(ko + 1) * block_K, 1], A_shared)
                else:
                    T.copy(A[b_index, by * block_M:(by + 1) * block_M, ko * block_K:(ko + 1) * block_K], A_shared)
                if form == "heads":
                    T.copy(B[ko * block_K:(ko + 1) * block_K, h_index, bx * block_N:(bx + 1) * block_N], B_shared)
                else:
                    T.copy(B[ko * block_K:(ko + 1) * block_K, bx * block_N:(bx + 1) * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
