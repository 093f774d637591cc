# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check --target=sm_90a %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --target=sm_90a --schedule-seed=9 %s | FileCheck %s
# RUN: %tl-opt --emit=simt --target=sm_90a %s | FileCheck %s --check-prefix=SIMT
# Shared-memory reuse inside a branch every thread takes alike (the persistent-grid form of TileLang's
# deepseek_mla decode: `for w in T.serial(waves): tile = ...; if tile < tiles: ...`): `big` (192 KB) lives
# through the whole branch, X and Y (24 KB each) are renewed in each iteration of the inner loop and never live
# at the same time, so they share bytes (221,184 bytes in all; 245,760 side by side would exceed the 232,448
# a block may use on sm_90a).  The barriers the planner needs between X's last read and Y's first write (and
# Y's last read and X's next write) lie inside the branch: allowed because its condition is built from the
# block index and a serial loop variable alone (lib/Lower/uniform.c), so every thread reaches them or none.
# The CPU executor checks every shared byte for races against the reference evaluator.
import tilelang.language as T


@T.prim_func
def smem_uniform_branch(A: T.Tensor((5, 96, 512), "float32"), B: T.Tensor((5, 96, 512), "float32"),
                        O: T.Tensor((5, 96, 512), "float32")):
    with T.Kernel(2, threads=128) as bx:
        big = T.alloc_shared((96, 512), "float32")
        X = T.alloc_shared((24, 256), "float32")
        Y = T.alloc_shared((24, 256), "float32")
        for w in T.serial(3):
            tile = w * 2 + bx
            if tile < 5:
                T.copy(A[tile, :, :], big)
                for k in T.serial(2):
                    T.copy(B[tile, k * 24:(k + 1) * 24, 0:256], X)
                    for i, j in T.Parallel(24, 256):
                        O[tile, k * 24 + i, j] = X[23 - i, j] + big[k * 24 + i, j]
                    T.copy(B[tile, 48 + k * 24:72 + k * 24, 256:512], Y)
                    for i, j in T.Parallel(24, 256):
                        O[tile, 48 + k * 24 + i, 256 + j] = Y[i, 255 - j] * 2.0 + big[48 + k * 24 + i, 256 + j]

# CHECK: output O shape=[5,96,512] dtype=float32
# CHECK: check: PASS
# SIMT: if tile < 5:
# SIMT: T.sync_threads()
