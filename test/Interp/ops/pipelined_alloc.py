# REQUIRES: tl-run
# Allocations inside a T.Pipelined body (TileLang allows them: a tile per
# iteration) move before the loop, so the copies the pipeline issues ahead
# stay in their scope; and a reduction over a staged shared buffer keeps its
# dim (staging adds a leading stage dimension: dim=1 of the tile is dim 2 of
# the staged buffer; the reduction summed the wrong axis before).
# RUN: %tl-run --device=cpu --check %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D hoisted=True %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D num_stages=3 -D K=320 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D num_stages=0 %s | FileCheck %s
# RUN: %tl-opt --emit=simt %s | FileCheck %s --check-prefix=SIMT
# CHECK: check: PASS
# SIMT: T.ptx_cp_async
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def rowsum(M=128, K=256, block_M=64, block_K=64, num_stages=2, hoisted=False):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            acc = T.alloc_fragment((block_M,), "float32")
            T.clear(acc)
            if hoisted:
                A_h = T.alloc_shared((block_M, block_K), "float32")
                part_h = T.alloc_fragment((block_M,), "float32")
                for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                    T.copy(A[bx * block_M, k * block_K], A_h)
                    T.reduce_sum(A_h, part_h, dim=1)
                    for i in T.Parallel(block_M):
                        acc[i] += part_h[i]
            else:
                for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                    A_s = T.alloc_shared((block_M, block_K), "float32")
                    part = T.alloc_fragment((block_M,), "float32")
                    T.copy(A[bx * block_M, k * block_K], A_s)
                    T.reduce_sum(A_s, part, dim=1)
                    for i in T.Parallel(block_M):
                        acc[i] += part[i]
            T.copy(acc, B[bx * block_M])

    return main
