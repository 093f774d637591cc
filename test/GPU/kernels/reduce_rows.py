# Row reductions for the reduction tests (issue 7): B[i] = op over j of
# A[i, j] for an (M, N) tile per block.  src/dst: "fragment" or "shared"
# (shared operands are staged with T.copy); clear=False starts from the
# values of B (an input too: out_idx none).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=None)
def reduce_rows(M=128, N=128, block_M=128, threads=128, op="sum", dtype="float32", out_dtype="float32",
                src="fragment", dst="fragment", clear=True):

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M,), out_dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            if src == "shared":
                A_s = T.alloc_shared((block_M, N), dtype)
            else:
                A_s = T.alloc_fragment((block_M, N), dtype)
            if dst == "shared":
                B_s = T.alloc_shared((block_M,), out_dtype)
            else:
                B_s = T.alloc_fragment((block_M,), out_dtype)
            T.copy(A[bx * block_M, 0], A_s)
            if not clear:
                T.copy(B[bx * block_M], B_s)
            if op == "sum":
                T.reduce_sum(A_s, B_s, dim=1, clear=clear)
            elif op == "max":
                T.reduce_max(A_s, B_s, dim=1, clear=clear)
            elif op == "min":
                T.reduce_min(A_s, B_s, dim=1, clear=clear)
            elif op == "abssum":
                T.reduce_abssum(A_s, B_s, dim=1, clear=clear)
            else:
                T.reduce_absmax(A_s, B_s, dim=1, clear=clear)
            T.copy(B_s, B[bx * block_M])

    return main
