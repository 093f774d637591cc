# REQUIRES: tl-run
# T.no_set_max_nreg() and its other name T.disable_warp_group_reg_alloc()
# keep the kernel's register count: the sm_90a warp-specialized GEMM, which
# gives its consumers more registers (T.ptx_setmaxnreg) at this tile size,
# emits none with either; the values are the reference evaluator's.
# RUN: %tl-run --device=cpu --check --target=sm_90a %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --target=sm_90a -D hint=2 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check %s | FileCheck %s
# RUN: %tl-opt --emit=simt --target=sm_90a %s | FileCheck %s --check-prefix=HINT
# RUN: %tl-opt --emit=simt --target=sm_90a -D hint=2 %s | FileCheck %s --check-prefix=HINT
# RUN: %tl-opt --emit=simt --target=sm_90a -D hint=0 %s | FileCheck %s --check-prefix=NOHINT
# CHECK: check: PASS
# HINT-NOT: setmaxnreg
# HINT: T.ptx_wgmma_ss
# HINT-NOT: setmaxnreg
# NOHINT: T.ptx_setmaxnreg(40, False)
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul(M=128, N=128, K=64, block_M=128, block_N=128, block_K=32, hint=1):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            if hint == 1:
                T.no_set_max_nreg()
            elif hint == 2:
                T.disable_warp_group_reg_alloc()
            A_s = T.alloc_shared((block_M, block_K), "float16")
            B_s = T.alloc_shared((block_K, block_N), "float16")
            C_l = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * block_M, bx * block_N])

    return main
