# RUN: not %tl-opt --emit=simt --kernel=not_a_group %s 2>&1 | FileCheck %s --check-prefix=GROUP
# RUN: not %tl-opt --emit=simt --kernel=nreg_outside %s 2>&1 | FileCheck %s --check-prefix=NREG
# RUN: not %tl-opt --emit=simt --kernel=fence_no_roles %s 2>&1 | FileCheck %s --check-prefix=FENCE
# Role branches on the thread index and their hints (lib/Frontend/elab_ws.c,
# lib/Lower/ws_scope.c): what is refused, each at its place.
# GROUP: role_branch_errors.py:17:9: error: T.ws scopes and branches on the thread index over other ranges than one warpgroup in one kernel are not supported yet
# NREG: role_branch_errors.py:33:13: error: T.set_max_nreg outside the role scopes
# FENCE: role_branch_errors.py:46:13: error: T.fence_proxy_async in a kernel without role scopes is not supported yet
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def not_a_group(N=128):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=256) as bx:
            tx = T.get_thread_binding()
            if tx < 64:
                T.copy(A, B)
            elif tx >= 128:
                T.copy(A, B)

    return main


@tilelang.jit(out_idx=[1])
def nreg_outside(N=128):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=256) as bx:
            tx = T.get_thread_binding()
            T.set_max_nreg(240, 1)
            if tx < 128:
                T.copy(A, B)

    return main


@tilelang.jit(out_idx=[1])
def fence_no_roles(N=128):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            T.copy(A, B)
            T.fence_proxy_async()

    return main
