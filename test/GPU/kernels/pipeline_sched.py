# T.Pipelined with order= and stage= (issue 14), written after TileLang's
# test_tilelang_language_pipeline.py: a float16 GEMM whose main loop gives
# each body statement (copy A, copy B, gemm) a stage and a position.
#   order, stage: lists (-D order=[1,2,0]);
#   num_stages: -1 leaves it out (max(stage) + 1 then);
#   group: True writes the two copies as one group (order/stage per group).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[2])
def pipeline_sched(M=256, N=256, K=256, block_M=64, block_N=64, block_K=32, threads=128, order=[0, 1, 2],
                   stage=[0, 0, 1], num_stages=-1, group=False, trans_A=False, dtype="float16"):
    o, s = order, stage
    A_shape = (K, M) if trans_A else (M, K)
    A_shared_shape = (block_K, block_M) if trans_A else (block_M, block_K)

    @T.prim_func
    def main(A: T.Tensor(A_shape, dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared(A_shared_shape, dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_local)
            if group:
                for k in T.Pipelined(T.ceildiv(K, block_K), order=o, stage=s, group=[[0, 1], [2]]):
                    if trans_A:
                        T.copy(A[k * block_K, by * block_M], A_shared)
                    else:
                        T.copy(A[by * block_M, k * block_K], A_shared)
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                    T.gemm(A_shared, B_shared, C_local, trans_A)
            elif num_stages >= 0:
                for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages, order=o, stage=s):
                    if trans_A:
                        T.copy(A[k * block_K, by * block_M], A_shared)
                    else:
                        T.copy(A[by * block_M, k * block_K], A_shared)
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                    T.gemm(A_shared, B_shared, C_local, trans_A)
            else:
                for k in T.Pipelined(T.ceildiv(K, block_K), order=o, stage=s):
                    if trans_A:
                        T.copy(A[k * block_K, by * block_M], A_shared)
                    else:
                        T.copy(A[by * block_M, k * block_K], A_shared)
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                    T.gemm(A_shared, B_shared, C_local, trans_A)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
