# T.tvm_warp_shuffle(mask, value, lane, width, warp_size) (TVM's builtin) is T.shfl_sync(mask, value, lane, width);
# warp_size must be a constant from 1 to 32.
# RUN: %tl-opt %s | FileCheck %s
# RUN: not %tl-opt -D ws=0 %s 2>&1 | FileCheck %s --check-prefix=BAD
# CHECK: B[tx] = T.shfl_sync(T.int64(4294967295), A[tx], (tx + 1) % 32, 8)
# BAD: tvm_warp_shuffle.py:[[@LINE+10]]:73: error: T.tvm_warp_shuffle: warp_size must be an integer constant from 1 to 32, got int 0
import tilelang.language as T

ws = 8


@T.prim_func
def k(A: T.Tensor((32,), "float32"), B: T.Tensor((32,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        tx = T.get_thread_binding(0)
        B[tx] = T.tvm_warp_shuffle(0xFFFFFFFF, A[tx], (tx + 1) % 32, 8, ws)
