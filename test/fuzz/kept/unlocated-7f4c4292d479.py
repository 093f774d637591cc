# RUN: not %tl-opt -D gx=2147483648 %s 2>&1 | FileCheck %s --check-prefix=X
# RUN: not %tl-opt -D gx=9223372036854775807 %s 2>&1 | FileCheck %s --check-prefix=X63
# RUN: not %tl-opt -D gy=65536 %s 2>&1 | FileCheck %s --check-prefix=Y
# RUN: not %tl-opt -D gz=65536 %s 2>&1 | FileCheck %s --check-prefix=Z
# RUN: %tl-opt -D gx=2147483647 -D gy=65535 -D gz=65535 %s 2>&1 >/dev/null | count 0
# A constant grid past the hardware's (x 2^31 - 1, y and z 65535 blocks) is
# a located error; the fuzzer (test/fuzz/mutate.py) found T.Kernel(2**63 - 1)
# accepted by tl-opt and refused by tl-run with a message naming no line.
# X: grid_limits.py:[[L:19]]:23: error: T.Kernel: grid dimension 0 is 2147483648 blocks, over the 2147483647 of the x axis
# X63: grid_limits.py:19:23: error: T.Kernel: grid dimension 0 is 9223372036854775807 blocks, over the 2147483647 of the x axis
# Y: grid_limits.py:19:27: error: T.Kernel: grid dimension 1 is 65536 blocks, over the 65535 of the y axis
# Z: grid_limits.py:19:31: error: T.Kernel: grid dimension 2 is 65536 blocks, over the 65535 of the z axis
import tilelang.language as T


def kernel(gx=1, gy=1, gz=1):
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
            A[T.get_thread_binding(0)] = 1.0
    return main
