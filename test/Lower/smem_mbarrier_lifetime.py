# REQUIRES: tl-run
# RUN: %tl-opt --emit=llvm --target=sm_90a %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --target=sm_90a --schedule-seed 3 %s | FileCheck %s --check-prefix=EXEC
# An mbarrier buffer lives for the whole kernel in smem-plan: here (TileLang's warp_specialize
# barrierpipe example in small) the epilogue's C staging tile after the producer/consumer loop took the
# bytes of the dead A/B ring *and* of the mbarriers at offset 0, i.e. plain stores over mbarrier objects
# without mbarrier.inval (undefined in PTX; on an H100 32 elements of a tile's first row came back NaN in
# one run of 16384^3).  Now the mbarriers keep offsets 0-31 and no 16-bit buffer starts at offset 0.
import tilelang.language as T


@T.prim_func
def smem_mbarrier_lifetime(A: T.Tensor((256, 256), "float16"), B: T.Tensor((256, 256), "float16"),
                           C: T.Tensor((256, 256), "float16")):
    with T.Kernel(2, 2, threads=256) as (bx, by):
        A_shared = T.alloc_shared((2, 128, 64), "float16")
        B_shared = T.alloc_shared((2, 64, 128), "float16")
        C_local = T.alloc_fragment((128, 128), "float32")
        mbars = T.alloc_barrier([128, 128, 128, 128])
        with T.ws(0):
            T.clear(C_local)
        for ko in range(4):
            with T.ws(1):
                T.mbarrier_wait_parity(mbarrier=mbars[ko % 2 + 2], parity=((ko // 2) % 2) ^ 1)
                T.tma_copy(A[by * 128:(by + 1) * 128, ko * 64:(ko + 1) * 64], A_shared[ko % 2, :, :],
                           barrier=mbars[ko % 2])
                T.tma_copy(B[ko * 64:(ko + 1) * 64, bx * 128:(bx + 1) * 128], B_shared[ko % 2, :, :],
                           barrier=mbars[ko % 2])
                T.mbarrier_arrive(mbarrier=mbars[ko % 2])
            with T.ws(0):
                T.mbarrier_wait_parity(mbarrier=mbars[ko % 2], parity=(ko // 2) % 2)
                T.gemm(A_shared[ko % 2, :, :], B_shared[ko % 2, :, :], C_local)
                T.mbarrier_arrive(mbarrier=mbars[ko % 2 + 2])
        with T.ws(0):
            T.copy(C_local, C[by * 128, bx * 128])

# CHECK: call void @llvm.nvvm.mbarrier.init.shared(ptr addrspace(3) @tl_smem, i32 128)
# CHECK-NOT: getelementptr half, ptr addrspace(3) @tl_smem,
# EXEC: output C shape=[256,256] dtype=float16
# EXEC: check: PASS
