# RUN: not %tl-opt --emit=simt -D gx=2147483648 %s 2>&1 | FileCheck %s --check-prefix=X
# RUN: not %tl-opt --emit=simt -D gx=9223372036854775807 %s 2>&1 | FileCheck %s --check-prefix=X63
# RUN: not %tl-opt --emit=simt -D gy=65536 %s 2>&1 | FileCheck %s --check-prefix=Y
# RUN: not %tl-opt --emit=simt -D gz=65536 %s 2>&1 | FileCheck %s --check-prefix=Z
# RUN: %tl-opt --emit=simt -D gx=2147483647 -D gy=65535 -D gz=65535 %s 2>&1 >/dev/null | count 0
# RUN: %tl-opt --analyze -D gy=65536 %s | FileCheck %s --check-prefix=ANALYZE
# A constant grid past the hardware's (x 2^31 - 1, y and z 65535 blocks) is
# a located error of compiling (the check-supported pass); the fuzzer
# (test/fuzz/mutate.py) found T.Kernel(2**63 - 1) accepted by tl-opt and
# refused by tl-run with a message naming no line.  It is a launch limit, not
# a rule of the IR: the tile IR parses, and its work can be analyzed (as
# TileLang's Analyzer does for the conv example's 262144-block grid): the
# body stores one float32 per thread, 32 threads x 65536 blocks x 4 bytes.
# ANALYZE: global_write_bytes=8388608
# ANALYZE: blocks=65536
# X: grid_limits.py:[[L:26]]:23: error: T.Kernel: grid dimension 0 is 2147483648 blocks, over the 2147483647 of the x axis
# X63: grid_limits.py:26:23: error: T.Kernel: grid dimension 0 is 9223372036854775807 blocks, over the 2147483647 of the x axis
# Y: grid_limits.py:26:27: error: T.Kernel: grid dimension 1 is 65536 blocks, over the 65535 of the y axis
# Z: grid_limits.py:26:31: error: T.Kernel: grid dimension 2 is 65536 blocks, over the 65535 of the z axis
import tilelang.language as T


def kernel(gx=1, gy=1, gz=1):
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(gx, gy, gz, threads=32) as (bx, by, bz):
            A[T.get_thread_binding(0)] = 1.0
    return main
