# A T.Pipelined GEMM loop whose tile copy's rows come from a value the loop body computes (the varlen
# attention form: `actual_k = k + start`).  form=global: the value reads a scalar parameter and a global
# table (the producer warpgroup evaluates it again: Hopper path); form=fragment: it reads a fragment the
# consumers filled (the producer has no copy of it: the loop stays on cp.async + mma.sync, with a remark).
import tilelang.language as T

form = "global"
M = 128
N = 64
D = 64


@T.prim_func
def loop_lets(Q: T.Tensor((M, 2, D), "float16"), K: T.Tensor((4 * N, 2, D), "float16"),
              Idx: T.Tensor((4,), "int32"), O: T.Tensor((M, 2, N), "float32"), start: T.int32):
    with T.Kernel(M // 64, 2, threads=128) as (bx, by):
        Q_s = T.alloc_shared((64, D), "float16")
        K_s = T.alloc_shared((N, D), "float16")
        idx_f = T.alloc_fragment((4,), "int32")
        acc = T.alloc_fragment((64, N), "float32")
        T.copy(Idx, idx_f)
        T.copy(Q[bx * 64:(bx + 1) * 64, by, :], Q_s)
        T.clear(acc)
        for k in T.Pipelined(2, num_stages=2):
            if form == "global":
                blk = Idx[(k + start) % 4]
            else:
                blk = idx_f[(k + start) % 4]
            row = blk * N
            T.copy(K[row:row + N, by, :], K_s)
            T.gemm(Q_s, K_s, acc, transpose_B=True)
        T.copy(acc, O[bx * 64:(bx + 1) * 64, by, :])
