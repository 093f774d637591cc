# RUN: not %tl-opt --target=sm_90a --emit=ptx %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=OVER
# RUN: %tl-opt --target=sm_90a --emit=ptx -D hi=232 %s | FileCheck %s --check-prefix=FITS
# RUN: %tl-opt --target=sm_90a --emit=ptx -D producer=False %s | FileCheck %s --check-prefix=UNKNOWN
# T.set_max_nreg in role scopes: setmaxnreg.inc waits until the SM's registers (65,536 = 512 x 128) have room,
# so shares summing past 512 a warpgroup thread hang the GPU (test/Interp/ops/role_branches.py rb_three asked for
# 240 + 240 + 40 and hung on the H200).  When every warpgroup sets its share, the sum is checked; a warpgroup
# that keeps its launch registers leaves the sum unknown and nothing is said.
# OVER: set_max_nreg_pool.py:27:17: error: T.set_max_nreg: the warpgroups ask for 240 + 240 + 40 = 520 registers a thread, more than the 512 an SM has (65536 registers / 128 threads of a warpgroup): setmaxnreg.inc would wait forever
# FITS: setmaxnreg.inc.sync.aligned.u32 232
# UNKNOWN: setmaxnreg.inc.sync.aligned.u32 240
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def three(N=64, hi=240, producer=True):
    @T.prim_func
    def main(A: T.Tensor((N, N), "int32"), B: T.Tensor((N, N), "int32")):
        with T.Kernel(1, threads=384) as bx:
            f0 = T.alloc_fragment((N, N), "int32")
            tx = T.get_thread_binding()
            if tx >= 256:
                if producer:
                    T.set_max_nreg(40, 0)
                T.copy(A, B)
            elif tx < 128:
                T.set_max_nreg(hi, 1)
                T.copy(A, f0)
                T.copy(f0, B)
            else:
                T.set_max_nreg(hi, 1)

    return main
