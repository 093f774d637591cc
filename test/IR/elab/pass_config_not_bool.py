# A pass config that is not a bool (or 0/1) is an error at its value, on the
# jit decorator and in T.func_attr alike.
# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# RUN: not %tl-opt -D attr=1 %s 2>&1 | FileCheck %s --check-prefix=ATTR
# CHECK: pass_config_not_bool.py:[[@LINE+10]]:49: error: "tl.disable_wgmma" must be True or False, got string 'yes'
# CHECK-NOT: error:
# ATTR: pass_config_not_bool.py:[[@LINE+12]]:53: error: "tl.disable_warp_specialized" must be True or False, got int 2
# ATTR-NOT: error:
import tilelang
import tilelang.language as T

attr = 0


@tilelang.jit(pass_configs={"tl.disable_wgmma": "yes" if attr == 0 else False})
def kernel(N=128):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        T.func_attr({"tl.disable_warp_specialized": 2 if attr == 1 else True})
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(128):
                A[i] = 0.0
    return main
