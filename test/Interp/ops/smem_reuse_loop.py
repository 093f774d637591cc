# REQUIRES: tl-run
# Shared memory reused inside a loop (lib/Lower/smem_reuse.c, issue 30): Keep
# (64 KiB) lives for the whole loop, R and S (64 KiB each) are renewed at
# every iteration (T.copy into all of R, T.Parallel over all of S) and die
# inside it, R before S is first written.  With whole-statement lifetimes the
# three need 196608 bytes, over the 166912 a block may use on sm_80; R and S
# sharing bytes need 131072.  The planner keeps R's last read and S's first
# write apart with a T.sync_threads() it inserts (the CPU executor checks
# every shared byte for races at the planned offsets), and the result is
# checked against the reference evaluator.
# RUN: %tl-run --device=cpu --check %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D iters=3 %s | FileCheck %s
# RUN: %tl-opt --remarks --target=sm_80 --emit=simt %s 2>&1 | FileCheck %s --check-prefix=PLAN
# CHECK: check: PASS
# PLAN: remark: shared memory: 196608 bytes with whole-statement lifetimes exceed the 166912 bytes a block may use on sm_80; buffers that die inside loop iterations share bytes: 131072 bytes: 'Keep' 65536 bytes at offset 0, 'R' 65536 bytes at offset 65536, 'S' 65536 bytes at offset 65536
# PLAN: for k in T.serial(
# PLAN: R[
# PLAN: = R[
# PLAN: T.sync_threads()
# PLAN-NEXT: for
# PLAN: S[
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def reuse(M=64, N=256, iters=2):
    @T.prim_func
    def main(A: T.Tensor((iters * M, N), "float32"), P: T.Tensor((M, N), "float32"),
             C: T.Tensor((iters * M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            Keep = T.alloc_shared((M, N), "float32")
            R = T.alloc_shared((M, N), "float32")
            S = T.alloc_shared((M, N), "float32")
            F = T.alloc_fragment((M, N), "float32")
            T.copy(P, Keep)
            for k in T.serial(iters):
                T.copy(A[k * M:(k + 1) * M, 0:N], R)
                for i, j in T.Parallel(M, N):
                    F[i, j] = R[M - 1 - i, j]
                for i, j in T.Parallel(M, N):
                    S[i, j] = F[i, j] * 2.0 + Keep[i, (j + 1) % N]
                T.copy(S, C[k * M:(k + 1) * M, 0:N])

    return main
