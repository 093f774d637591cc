# A kernel that allocates global memory itself (T.alloc_buffer(scope="global"),
# the form of stream-K's workspace in SIMT IR): parsed, then refused by
# check-supported (test/NVPTX/stream-k.test).
import tilelang
import tilelang.language as T


@tilelang.jit
def k():
    @T.prim_func
    def main(A: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            W = T.alloc_buffer((128,), "float32", scope="global")
            for i in T.Parallel(128):
                W[i] = A[i] * 2.0
            for i in T.Parallel(128):
                A[i] = W[i] + 1.0
    return main
