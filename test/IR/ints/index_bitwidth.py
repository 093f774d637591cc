# TileLang's pass config "tl.config_index_bitwidth": 64 computes every global
# tensor index in int64 (lib/IR/index64.c); 32 (the default) leaves int32
# indices of tensors whose dims fit int32; other values are errors.
# RUN: %tl-opt --emit=simt %s | FileCheck %s
# CHECK: T.func_attr({"out_idx": [1], "tl.config_index_bitwidth": 64})
# CHECK: B[T.Cast("int64", bx) * T.int64(256) + T.Cast("int64", T.get_thread_binding(0))] = A[T.Cast("int64", bx) * T.int64(256) + T.Cast("int64", T.get_thread_binding(0))]
# RUN: %tl-opt --emit=simt -DWIDTH=32 %s | FileCheck %s --check-prefix=W32
# W32: T.func_attr({"out_idx": [1]})
# W32: B[bx * 256 + T.get_thread_binding(0)] = A[bx * 256 + T.get_thread_binding(0)]
# RUN: not %tl-opt -DWIDTH=48 %s 2>&1 | FileCheck %s --check-prefix=BAD
# BAD: index_bitwidth.py:[[@LINE+7]]:{{[0-9]+}}: error: "tl.config_index_bitwidth" must be 32 or 64, got int 48
import tilelang
import tilelang.language as T

WIDTH = 64


@tilelang.jit(out_idx=-1, pass_configs={"tl.config_index_bitwidth": WIDTH})
def kernel(N=4096):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(N // 256, threads=256) as bx:
            for i in T.Parallel(256):
                B[bx * 256 + i] = A[bx * 256 + i]
    return main
