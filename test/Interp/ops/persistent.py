# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check %s | FileCheck %s --check-prefix=SMALL
# RUN: %tl-opt %s | FileCheck %s --check-prefix=TIR
# RUN: %tl-run --device=cpu --check --target=sm_90a -D M=80 -D N=176 -D SMS=3 -D GROUP=8 %s | FileCheck %s --check-prefix=BIG
# RUN: %tl-run --device=cpu --check -D M=64 -D N=64 -D SMS=5 -D GROUP=1 %s | FileCheck %s --check-prefix=ONE
# T.Persistent(domain, wave_size, index, group_size=8) (TileLang's persistent
# tile loop, gemm/example_gemm_persistent.py): block `index` of `wave_size`
# takes the tiles index, index + wave_size, ... of the domain in grouped order
# (the last dimension cut into groups of group_size columns; the grouped
# domain is (ceildiv(n_tiles, g), m_tiles, g), row-major).  Each tile of 16 x 16
# is copied (Out = A * 2) and Owner[bx, by] = block * (3 * bx + by + 1) records
# which block took it.
# Worked by hand for 2 x 3 tiles, 4 blocks, groups of 2 (the default run):
# tile number rem = w * 4 + block; by = rem // 4 * 2 + rem % 2, bx = rem // 2 % 2:
#   rem 0 -> (0,0), 1 -> (0,1), 2 -> (1,0), 3 -> (1,1), 4 -> (0,2), 5 -> by 3 (none),
#   6 -> (1,2), 7 -> none; Owner = [[0*1, 1*2, 0*3], [2*4, 3*5, 2*6]], sum 37.
import tilelang
import tilelang.language as T

M = 32
N = 48
SMS = 4
GROUP = 2


@tilelang.jit(out_idx=[1, 2])
def persistent(block=16):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), Out: T.Tensor((M, N), "float32"),
             Owner: T.Tensor((T.ceildiv(M, block), T.ceildiv(N, block)), "int32")):
        with T.Kernel(SMS, threads=64) as block_id:
            S = T.alloc_shared((block, block), "float32")
            for bx, by in T.Persistent([T.ceildiv(M, block), T.ceildiv(N, block)], SMS, block_id, GROUP):
                T.copy(A[bx * block, by * block], S)
                for i, j in T.Parallel(block, block):
                    if bx * block + i < M and by * block + j < N:
                        Out[bx * block + i, by * block + j] = S[i, j] * 2
                    if i == 0 and j == 0:
                        Owner[bx, by] = block_id * (3 * bx + by + 1)

    return main

# TIR: for w in T.serial(2):
# TIR-NEXT: by = (w * 4 + block_id) // 4 * 2 + (w * 4 + block_id) % 2
# TIR-NEXT: bx = (w * 4 + block_id) // 2 % 2
# TIR-NEXT: if by < 3:
# SMALL: output Owner shape=[2,3] dtype=int32 sum=37 abs_sum=37
# SMALL: check: PASS
# BIG: check: PASS
# ONE: check: PASS
