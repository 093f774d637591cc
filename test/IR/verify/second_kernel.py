# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# Several T.Kernel scopes in one prim_func are its launch stages, statements of
# its body one after another (docs/language.md "Several T.Kernel scopes"); one
# inside a loop is refused at its line, with the first one noted.
# CHECK: {{.*}}second_kernel.py:16:9: error: several T.Kernel scopes in one prim_func must be statements of its body, one after another (not inside a loop or an if)
# CHECK: {{.*}}second_kernel.py:13:5: note: the first T.Kernel is here
# CHECK-NOT: error:
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A[bx] = 0.0
    for i in T.serial(2):
        with T.Kernel(2, threads=128) as by:
            A[by] = 1.0
