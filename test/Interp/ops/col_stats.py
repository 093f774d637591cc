# REQUIRES: tl-run
# Column statistics (docs/layouts.md "Column statistics"): a 2-D fragment f reduced along dim 0 into cs
# (T.reduce_sum / max / min / abssum, clear=True and False) and read back as cs[j] in a T.Parallel over f's
# shape, copied to global memory (only replica 0 stores) and read by a 1-D T.Parallel over its own shape.  f
# takes the ROWS layout (it is also reduced along dim 1), cs the COLS layout over it; the reduce combines the
# row groups that hold each column with shared memory (128 threads, 16 groups of 8), shuffles (32 threads),
# T.shfl_sync of 16 lanes (16 threads), or not at all (one group of 96 threads), with padding column vectors
# (N = 12 over groups of 4 threads) and several rows a thread (M = 6 over 2 groups).  Checked on the CPU
# executor against the reference evaluator.
# RUN: %tl-run --device=cpu --check %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --schedule-seed=3 -D op=1 -D clear=0 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D op=2 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D op=3 -D clear=0 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D M=4 -D N=4 -D threads=32 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D M=8 -D N=8 -D threads=16 -D clear=0 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D M=16 -D N=64 -D threads=96 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D M=16 -D N=12 -D threads=64 -D op=1 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D M=6 -D N=4 -D threads=32 -D op=2 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --target=sm_90a -D M=32 -D N=128 -D threads=64 %s | FileCheck %s
# RUN: %tl-opt --emit=simt %s | FileCheck %s --check-prefix=SHARED
# CHECK-NOT: check: FAIL
# CHECK: check: PASS
# SHARED: red_ws = T.alloc_shared((512,), "float32")
# SHARED: red_ws[rk_{{[0-9]+}} * 128 + T.get_thread_binding(0)] = red_acc_1[rk_{{[0-9]+}}]
# SHARED: red_acc_1[rk_{{[0-9]+}}] = red_ws[rk_{{[0-9]+}} * 128 + T.get_thread_binding(0) % 8] + red_ws[rk_{{[0-9]+}} * 128 + T.get_thread_binding(0) % 8 + 8] +
import tilelang
import tilelang.language as T


@tilelang.jit
def cs_kernel(M=64, N=32, threads=128, op=0, clear=1):
    @T.prim_func
    def cs_main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), S: T.Tensor((N,), "float32"),
                Q: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=threads) as bx:
            f = T.alloc_fragment((M, N), "float32")
            rs = T.alloc_fragment((M,), "float32")
            cs = T.alloc_fragment((N,), "float32")
            T.copy(A, f)
            T.reduce_sum(f, rs, dim=1)
            for i, j in T.Parallel(M, N):
                f[i, j] = f[i, j] - rs[i] * 0.125
            T.fill(cs, 0.5)
            if op == 0:
                T.reduce_sum(f, cs, dim=0, clear=clear != 0)
            elif op == 1:
                T.reduce_max(f, cs, dim=0, clear=clear != 0)
            elif op == 2:
                T.reduce_min(f, cs, dim=0, clear=clear != 0)
            else:
                T.reduce_abssum(f, cs, dim=0, clear=clear != 0)
            for i, j in T.Parallel(M, N):
                f[i, j] = f[i, j] * 2.0 + cs[j]
            T.copy(f, B)
            T.copy(cs, S)
            for j in T.Parallel(N):
                Q[j] = cs[j] * 3.0

    return cs_main
