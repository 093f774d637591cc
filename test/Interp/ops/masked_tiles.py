# REQUIRES: tl-run
# A T.Pipelined loop whose body is one `if` on an element of a fragment copied
# from global memory (block-sparse attention's `if block_mask[k] != 0:` over
# its copies and gemms, TileLang's example_tilelang_block_sparse_attn.py).
# Such a fragment is replicated (every thread holds all of it), so the
# condition is the same on every thread and the barriers between the copies
# into shared memory and the gemm that reads them go inside the `if`.  Before,
# the barrier pass took the condition for a per-thread value and placed none
# inside: the SIMT executor reported a data race on the shared tile, and on an
# H200 the example's output differed from PyTorch's in 30% of its elements.
# RUN: %tl-run --device=cpu --check %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --target=sm_90a %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D stages=2 %s | FileCheck %s
# RUN: %tl-opt --emit=simt %s | FileCheck %s --check-prefix=SIMT
# CHECK: check: PASS
# SIMT: if mask[k] != T.int8(0):
# SIMT: T.sync_threads()
# SIMT: T.ptx_mma(
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def masked_gemm(M=64, N=64, K=256, block_K=64, stages=1):
    nk = K // block_K

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), Mask: T.Tensor((nk,), "int8"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((M, block_K), "float16")
            B_s = T.alloc_shared((block_K, N), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            mask = T.alloc_fragment((nk,), "int8")
            T.copy(Mask, mask)
            T.clear(acc)
            for k in T.Pipelined(nk, num_stages=stages):
                if mask[k] != 0:
                    T.copy(A[0, k * block_K], A_s)
                    T.copy(B[k * block_K, 0], B_s)
                    T.gemm(A_s, B_s, acc)
            T.copy(acc, C)

    return main
