# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check --target=sm_80 %s | FileCheck %s
# RUN: %tl-opt --emit=ptx --target=sm_80 --remarks %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
# A GEMM with T.use_swizzle (the rasterize pass wraps the kernel body in a sequence behind its LETs) whose
# float32 C_shared epilogue tile (128 KB) does not fit beside the 3-stage A/B ring (144 KB) on sm_80: the
# shared-memory reuse planner looks through that wrapping sequence, so the pipelined loop and the epilogue
# are separate top-level statements and C_shared takes the ring's bytes once the loop is done (TileLang's
# gemm_sp example at 128x256x128, 2 stages, has this shape).  Checked against the reference evaluator.
import tilelang.language as T


@T.prim_func
def smem_rasterized_epilogue(A: T.Tensor((256, 256), "float16"), B: T.Tensor((256, 512), "float16"),
                             C: T.Tensor((256, 512), "float32")):
    with T.Kernel(2, 2, threads=256) as (bx, by):
        A_shared = T.alloc_shared((128, 64), "float16")
        B_shared = T.alloc_shared((64, 256), "float16")
        C_shared = T.alloc_shared((128, 256), "float32")
        C_local = T.alloc_fragment((128, 256), "float32")
        T.use_swizzle(panel_size=2)
        T.clear(C_local)
        for k in T.Pipelined(4, num_stages=3):
            T.copy(A[by * 128, k * 64], A_shared)
            T.copy(B[k * 64, bx * 256], B_shared)
            T.gemm(A_shared, B_shared, C_local)
        T.copy(C_local, C_shared)
        T.copy(C_shared, C[by * 128, bx * 256])

# CHECK: output C shape=[256,512] dtype=float32
# CHECK: check: PASS
# REMARK: remark: shared memory: 278528 bytes with whole-statement lifetimes exceed the 166912 bytes a block may use on sm_80; buffers that die inside loop iterations share bytes: 147456 bytes: {{.*}}'C_shared' 131072 bytes at offset 0
