# A copy through a fragment over an (M, N) tensor; M = 2**63 - 1 by default
# (test/IR/ints/extreme_shapes.test).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def k(M=9223372036854775807, N=16):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, 32), threads=128) as bx:
            A_f = T.alloc_fragment((32, N), "float32")
            T.copy(A[bx * 32, 0], A_f)
            T.copy(A_f, B[bx * 32, 0])
    return main
