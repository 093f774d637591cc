# RUN: %tl-opt --passes=barriers,layout-inference,lower-tile-ops %s > %t.simt
# RUN: FileCheck %s --check-prefix=BEFORE < %t.simt
# RUN: %tl-opt --passes=smem-plan %t.simt | FileCheck %s
# RUN: %tl-opt --passes=barriers,layout-inference,lower-tile-ops -D n=200 %s > %t.big
# RUN: not %tl-opt --passes=smem-plan --target=sm_80 %t.big 2>&1 | FileCheck %s --check-prefix=LIMIT
# RUN: %tl-opt --passes=smem-plan --target=sm_90a %t.big | FileCheck %s
# Pass "smem-plan" (lib/Lower/smem_plan.c) alone, on SIMT IR text: X dies
# (its last read) before Y is first written, so Y reuses X's bytes (offset
# 0) and a T.sync_threads() goes between the last read of X and the first
# write of Y, which the input did not have.  Two buffers of 200 x 256 floats
# (204800 bytes) exceed what a block may use on sm_80 (166912 bytes: an
# error naming each buffer, its size and offset) but fit on sm_90a: the
# --target reaches the pass.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=None)
def kernel(n=64):
    @T.prim_func
    def main(A: T.Tensor((n, 256), "float32"), B: T.Tensor((n, 256), "float32")):
        with T.Kernel(1, threads=128) as bx:
            X = T.alloc_shared((n, 256), "float32")
            Y = T.alloc_shared((n, 256), "float32")
            T.copy(A, X)
            T.copy(X, B)
            T.copy(B, Y)
            T.copy(Y, A)

    return main

# BEFORE: B[{{.*}}] = X[
# BEFORE-NEXT: for vq_2 in T.serial(
# BEFORE-NEXT: Y[

# CHECK: B[{{.*}}] = X[
# CHECK-NEXT: T.sync_threads()
# CHECK-NEXT: for vq_2 in T.serial(
# CHECK-NEXT: Y[

# LIMIT: error: shared memory of 204800 bytes exceeds the 166912 bytes a block may use on sm_80: 'X' 204800 bytes at offset 0, 'Y' 204800 bytes at offset 0
