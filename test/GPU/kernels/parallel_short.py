# T.Parallel loops shorter than the fragment they index (issue 14; TileLang
# #1744, #2957): the short loop covers part of the fragment, the rest is
# masked; another op distributes the fragment over the threads.
#   kind="prefix1d": #1744: S (8,) copied into a fragment, a T.Parallel(4)
#     inside a serial loop broadcasts its first 4 elements into D (4, 64);
#   kind="short_first": a fragment (M, N) filled, then a T.Parallel over its
#     first rows (rows) and first columns (cols) writes 2 * A there, then a
#     full T.Parallel writes B = F + 1 (the short loop comes first);
#   kind="gemm": a T.gemm accumulator (64, 64) whose first `rows` rows a short
#     T.Parallel scales by 2 before the copy out.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def parallel_short(kind="prefix1d", M=64, N=32, rows=24, cols=32, threads=128, dtype="float32"):

    @T.prim_func
    def prefix1d(S: T.Tensor((8,), "bfloat16"), D: T.Tensor((4, 64), "bfloat16")):
        with T.Kernel(1, threads=threads):
            S_shared = T.alloc_shared((8,), "bfloat16")
            S_fragment = T.alloc_fragment((8,), "float32")
            D_shared = T.alloc_shared((4, 64), "bfloat16")
            T.copy(S, S_shared)
            T.copy(S_shared, S_fragment)
            for k in T.serial(64):
                for i in T.Parallel(4):
                    D_shared[i, k] = S_fragment[i]
            T.copy(D_shared, D)

    @T.prim_func
    def short_first(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(1, threads=threads):
            F = T.alloc_fragment((M, N), dtype)
            T.fill(F, 0.5)
            for i, j in T.Parallel(rows, cols):
                F[i, j] = A[i, j] * 2.0
            for i, j in T.Parallel(M, N):
                B[i, j] = F[i, j] + 1.0

    @T.prim_func
    def gemm(A: T.Tensor((64, 32), "float16"), Bm: T.Tensor((32, 64), "float16"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=threads):
            A_s = T.alloc_shared((64, 32), "float16")
            B_s = T.alloc_shared((32, 64), "float16")
            C_l = T.alloc_fragment((64, 64), "float32")
            T.copy(A, A_s)
            T.copy(Bm, B_s)
            T.gemm(A_s, B_s, C_l, clear_accum=True)
            for i, j in T.Parallel(rows, 64):
                C_l[i, j] = C_l[i, j] * 2.0
            T.copy(C_l, C)

    if kind == "short_first":
        return short_first
    if kind == "gemm":
        return gemm
    return prefix1d
