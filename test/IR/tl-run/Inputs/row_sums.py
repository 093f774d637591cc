# A float32 row sum: the CPU SIMT executor's shuffle tree and the reference evaluator's sequential sum
# differ in the last bits (tolerance.test).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def row_sums(M=64, N=256):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            a = T.alloc_fragment((M, N), "float32")
            s = T.alloc_fragment((M,), "float32")
            T.copy(A, a)
            T.reduce_sum(a, s, dim=1)
            T.copy(s, B)

    return main
