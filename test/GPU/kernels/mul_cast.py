# C = cast(A * B) elementwise over fragments: one multiply rounded in the
# input dtype, then one conversion to out_dtype (round to nearest even).
# Used by test/GPU/test_cpu_vs_gpu.c to compare the GPU with the CPU SIMT
# executor bit for bit.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def mul_cast(M=1000, N=1030, block_M=32, block_N=128, in_dtype="float32", out_dtype="float16",
             threads=128):

    @T.prim_func
    def main(A: T.Tensor((M, N), in_dtype), B: T.Tensor((M, N), in_dtype), C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_frag = T.alloc_fragment((block_M, block_N), in_dtype)
            B_frag = T.alloc_fragment((block_M, block_N), in_dtype)
            C_frag = T.alloc_fragment((block_M, block_N), out_dtype)
            T.copy(A[by * block_M, bx * block_N], A_frag)
            T.copy(B[by * block_M, bx * block_N], B_frag)
            for i, j in T.Parallel(block_M, block_N):
                C_frag[i, j] = T.Cast(out_dtype, A_frag[i, j] * B_frag[i, j])
            T.copy(C_frag, C[by * block_M, bx * block_N])

    return main
