# A block-sparse GEMM loop (TileLang's blocksparse_gemm example): the T.Pipelined loop's body is one
# `if COND:` around the tile copies and the T.gemm.  form=mask: COND reads a global mask (the example);
# bsgemm_flat: a 1-D grid (one output tile a block, no persistent grid) and a COND of a scalar parameter, LETs
# before the loop and the loop index.  The other forms of bsgemm read what the producer warpgroup cannot
# evaluate as the consumers do: shared memory, a fragment, a local variable (directly, or through a LET before
# the loop), a global tensor the kernel writes (the loop stays on cp.async + mma.sync, with a remark at the `if`).
import tilelang.language as T

form = "mask"
M = 128
N = 128
K = 128
bM = 64
bN = 64
bK = 32


@T.prim_func
def bsgemm(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
           Mask: T.Tensor((M // bM, N // bN, K // bK), "bool"), C: T.Tensor((M, N), "float16"), skip: T.int32):
    with T.Kernel(N // bN, M // bM, threads=128) as (bx, by):
        A_s = T.alloc_shared((bM, bK), "float16")
        B_s = T.alloc_shared((bK, bN), "float16")
        S_s = T.alloc_shared((4,), "int32")
        acc = T.alloc_fragment((bM, bN), "float32")
        f = T.alloc_fragment((4,), "int32")
        v = T.alloc_var("int32")
        T.clear(acc)
        v = skip
        w = v * 2
        for k in T.Pipelined(K // bK, num_stages=2):
            if (Mask[by, bx, k] if form == "mask" else S_s[k] > 0 if form == "shared" else f[k] > 0
                    if form == "fragment" else v != k if form == "local" else w != k
                    if form == "let" else C[by * bM, k] > 0):
                T.copy(A[by * bM, k * bK], A_s)
                T.copy(B[k * bK, bx * bN], B_s)
                T.gemm(A_s, B_s, acc)
        T.copy(acc, C[by * bM, bx * bN])


@T.prim_func
def bsgemm_flat(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16"),
                skip: T.int32):
    with T.Kernel((M // bM) * (N // bN), threads=128) as b:
        A_s = T.alloc_shared((bM, bK), "float16")
        B_s = T.alloc_shared((bK, bN), "float16")
        acc = T.alloc_fragment((bM, bN), "float32")
        bx = b % (N // bN)
        by = b // (N // bN)
        T.clear(acc)
        for k in T.Pipelined(K // bK, num_stages=3):
            if (k + bx + by) % 3 != skip:
                T.copy(A[by * bM, k * bK], A_s)
                T.copy(B[k * bK, bx * bN], B_s)
                T.gemm(A_s, B_s, acc)
        T.copy(acc, C[by * bM, bx * bN])
