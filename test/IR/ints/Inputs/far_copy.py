# T.copy of the (4, 64) tile at A[R, C] into shared memory and out to B: a
# tile outside A pads zeros (test/IR/ints/extreme_shapes.test).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def k(R=0, C=0):
    @T.prim_func
    def main(A: T.Tensor((4, 64), "float32"), B: T.Tensor((4, 64), "float32")):
        with T.Kernel(1, threads=64) as bx:
            A_s = T.alloc_shared((4, 64), "float32")
            T.copy(A[R, C], A_s)
            T.copy(A_s, B)
    return main
