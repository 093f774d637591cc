# B = A + 1 over uint8 tensors of 2^33 elements (issue 15): a 1-D tensor,
# whose indices the compiler computes in int64 (lib/IR/index64.c), and a 2-D
# (65536, 131072) one, whose dims fit int32 and whose flat offset codegen
# computes in 64 bits.  test/GPU/test_wide_index.c runs both on the GPU.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def add_one_1d(N=8589934592, block=1024, threads=128):

    @T.prim_func
    def add_one_1d_main(A: T.Tensor((N,), "uint8"), B: T.Tensor((N,), "uint8")):
        with T.Kernel(T.ceildiv(N, block), threads=threads) as bx:
            for i in T.Parallel(block):
                if bx * block + i < N:
                    B[bx * block + i] = A[bx * block + i] + T.uint8(1)

    return add_one_1d_main


@tilelang.jit(out_idx=-1)
def add_one_2d(M=65536, N=131072, block_M=32, block_N=256, threads=128):

    @T.prim_func
    def add_one_2d_main(A: T.Tensor((M, N), "uint8"), B: T.Tensor((M, N), "uint8")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_f = T.alloc_fragment((block_M, block_N), "uint8")
            T.copy(A[by * block_M, bx * block_N], A_f)
            for i, j in T.Parallel(block_M, block_N):
                A_f[i, j] = A_f[i, j] + T.uint8(1)
            T.copy(A_f, B[by * block_M, bx * block_N])

    return add_one_2d_main


@tilelang.jit(out_idx=-1)
def add_f16_dyn64(block=1024, threads=128):
    # C = A + B in float16 over n elements, n an int64 dynamic dim (any size):
    # passed as an int64 kernel parameter, indices in int64
    n = T.dynamic("n", "int64")

    @T.prim_func
    def add_f16_dyn64_main(A: T.Tensor((n,), "float16"), B: T.Tensor((n,), "float16"),
                           C: T.Tensor((n,), "float16")):
        with T.Kernel(T.ceildiv(n, block), threads=threads) as bx:
            for i in T.Parallel(block):
                if bx * block + i < n:
                    C[bx * block + i] = A[bx * block + i] + B[bx * block + i]

    return add_f16_dyn64_main
