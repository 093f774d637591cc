"""T.tvm_warp_shuffle (TVM's builtin, TileLang's hadamard example) is CUDA's __shfl_sync(mask, value, lane, width):
run by the CPU SIMT executor (the reference evaluator runs no shuffles), checked against NumPy exactly; the
swizzle hint make_mma_swizzle_layout of tilelang.cuda.intrinsics is accepted on a shared buffer."""
import numpy as np
import pytest

import tilelang_ptx as tilelang
import tilelang_ptx.language as T
from tilelang_ptx.cuda.intrinsics import make_mma_swizzle_layout


@tilelang.jit(out_idx=-1, target="cpu")
def shuffle(width, delta, logical=32):
    @T.prim_func
    def main(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            S = T.alloc_shared((64,), "float32")
            T.annotate_layout({S: make_mma_swizzle_layout(S)})
            tx = T.get_thread_binding(0)
            v = T.alloc_local((1,), "float32")
            v[0] = A[tx]
            S[tx] = T.tvm_warp_shuffle(0xFFFFFFFF, v[0], (tx + delta) % 32, width, logical)
            B[tx] = S[63 - tx]

    return main


@pytest.mark.parametrize("width,delta", [(32, 1), (32, 17), (8, 3), (4, 1)])
def test_tvm_warp_shuffle(width, delta):
    A = np.arange(64, dtype=np.float32) * 1.5
    lane = np.arange(64)
    # __shfl_sync(mask, v, srcLane, width): from lane (srcLane % width) of this thread's width-segment
    src = (lane // 32) * 32 + (lane % 32) // width * width + ((lane % 32 + delta) % 32) % width
    want = A[src][::-1]
    np.testing.assert_array_equal(shuffle(width, delta)(A), want)


def test_tvm_warp_shuffle_errors():
    with pytest.raises(tilelang.CompileError, match="warp_size must be an integer constant from 1 to 32, got int 64"):
        shuffle(32, 1, 64)
