# RUN: %tl-opt --passes=layout-inference,lower-tile-ops %s > %t.simt
# RUN: FileCheck %s --check-prefix=BEFORE < %t.simt
# RUN: %tl-opt --passes=rasterize %t.simt | FileCheck %s
# Pass "rasterize" (lib/Lower/rasterize.c) alone, on SIMT IR text:
# T.use_swizzle(2) on an 8 x 4 grid (row order, panels of P = 2 rows,
# P * gx = 16 blocks each) becomes LET bindings of bx, by computed from the
# launch indices (renamed bx_launch, by_launch): the block b = bx + 8 * by in
# launch order walks panel b // 16, offset b % 16; a panel is 2 rows wide
# (the last one 4 - 2 * panel), bx runs backwards in odd panels; the body
# below still uses bx, by.  No T.use_swizzle remains.
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((256, 512), "float32")):
    with T.Kernel(8, 4, threads=128) as (bx, by):
        T.use_swizzle(2)
        F = T.alloc_fragment((32, 64), "float32")
        T.fill(F, 1.0)
        T.copy(F, A[by * 64, bx * 64])

# BEFORE: T.use_swizzle(2)

# CHECK: with T.Kernel(8, 4, threads=128) as (bx_launch, by_launch):
# CHECK-NEXT: rz_block = bx_launch + by_launch * 8
# CHECK-NEXT: rz_panel = rz_block // 16
# CHECK-NEXT: rz_offset = rz_block % 16
# CHECK-NEXT: rz_stride = T.if_then_else(rz_panel + 1 < 2, 2, 4 - rz_panel * 2)
# CHECK-NEXT: bx = T.if_then_else(rz_panel % 2 == 1, 7 - rz_offset // rz_stride, rz_offset // rz_stride)
# CHECK-NEXT: by = rz_offset % rz_stride + rz_panel * 2
# CHECK-NOT: T.use_swizzle
# CHECK: A[by * 64 + {{.*}}, T.Ramp(bx * 64 + {{.*}}, 1, 4)] =
# CHECK-NOT: T.use_swizzle
