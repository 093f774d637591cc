# A loop variable may rebind an enclosing loop's variable (loop_var_rebind.py
# in test/Interp/ops), but not another IR name of the prim_func: a let, an
# allocation or a block index keeps the redefinition error.
# RUN: not %tl-opt %s -D form=0 2>&1 | FileCheck %s --check-prefix=LET
# RUN: not %tl-opt %s -D form=1 2>&1 | FileCheck %s --check-prefix=ALLOC
# RUN: not %tl-opt %s -D form=2 2>&1 | FileCheck %s --check-prefix=BLOCK
# LET: {{.*}}loop_var_redefinition.py:29:25: error: redefinition of 'row'
# LET: {{.*}}loop_var_redefinition.py:27:17: note: previous definition of 'row' is here
# ALLOC: {{.*}}loop_var_redefinition.py:33:25: error: redefinition of 'buf'
# ALLOC: {{.*}}loop_var_redefinition.py:25:13: note: previous definition of 'buf' is here
# BLOCK: {{.*}}loop_var_redefinition.py:36:21: error: redefinition of 'bx'
# BLOCK: {{.*}}loop_var_redefinition.py:24:42: note: previous definition of 'bx' is here
# LET-NOT: error:
# ALLOC-NOT: error:
# BLOCK-NOT: error:
import tilelang
import tilelang.language as T


@tilelang.jit
def kernel(form=0):
    @T.prim_func
    def main(A: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            buf = T.alloc_fragment((128,), "float32")
            if form == 0:
                row = bx * 2
                for i in T.serial(2):
                    for row in T.serial(2):
                        A[row] = 0.0
            elif form == 1:
                for i in T.serial(2):
                    for buf in T.serial(2):
                        A[i] = 0.0
            else:
                for bx in T.serial(2):
                    A[bx] = 0.0
    return main
