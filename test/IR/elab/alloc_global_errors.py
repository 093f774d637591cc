# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# T.alloc_global (a kernel workspace, docs/simt-ir.md "Kernel workspaces")
# refused where it has no meaning, each at its location: after the T.Kernel
# (no kernel uses it), a shape that is not static, a scope other than global.
import tilelang.language as T

n = T.dynamic("n")


@T.prim_func
def after(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A[0] = 1.0
    C = T.alloc_global((128,), "float32")


@T.prim_func
def dyn(A: T.Tensor((n,), "float32")):
    C = T.alloc_global((n,), "float32")
    with T.Kernel(1, threads=128) as bx:
        A[0] = 1.0


@T.prim_func
def scope(A: T.Tensor((128,), "float32")):
    C = T.alloc_global((128,), "float32", scope="shared")
    with T.Kernel(1, threads=128) as bx:
        A[0] = C[0]



# an error in the kernel that uses it is the only error (the allocation is not reported as unplaced)
@T.prim_func
def bad_body(A: T.Tensor((128,), "float32")):
    C = T.alloc_global((128,), "float32")
    with T.Kernel(1, threads=128) as bx:
        A[0] = C[0] + undefined_name

# CHECK: alloc_global_errors.py:14:5: error: T.alloc_global needs a T.Kernel after it in the prim_func
# CHECK: alloc_global_errors.py:19:25: error: the shape of T.alloc_global must be static (a kernel workspace)
# CHECK: alloc_global_errors.py:26:49: error: unsupported scope 'shared' for T.alloc_global (expected global)
# CHECK: alloc_global_errors.py:{{[0-9]+}}:23: error: name 'undefined_name' is not defined
# CHECK-NOT: error:
