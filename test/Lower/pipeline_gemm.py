# RUN: %tl-opt --emit=simt --print-after-all=all -D M=256 -D N=256 -D K=128 %examples/gemm.py 2>&1 >/dev/null | FileCheck %s --check-prefix=TIR
# RUN: %tl-opt --emit=ptx %examples/gemm.py > %t.ptx
# RUN: FileCheck %s --check-prefix=PTX < %t.ptx
# RUN: FileCheck %s --check-prefix=MMA < %t.ptx
# T.Pipelined(num_stages=3) on the tile IR (pipeline_loop.c): the shared
# operands gain a leading stage dim, the first two stages are issued before
# the loop, each iteration waits for its own group, synchronises, issues the
# copies two iterations ahead into the stage the previous iteration read,
# and commits one group (empty in the last two iterations).  The serial loop
# keeps the stage count (annotations={"num_stages": 3}) for the barriers and
# frag-pipeline passes.

# TIR-LABEL: // ----- after pipeline -----
# TIR: A_shared = T.alloc_shared((3, 128, 32), "float16")
# TIR-NEXT: B_shared = T.alloc_shared((3, 32, 128), "float16")
# TIR: T.async_copy(A[by * 128:by * 128 + 128, 0:32], A_shared[0, 0:128, 0:32])
# TIR-NEXT: T.async_copy(B[0:32, bx * 128:bx * 128 + 128], B_shared[0, 0:32, 0:128])
# TIR-NEXT: T.ptx_commit_group()
# TIR-NEXT: T.async_copy(A[by * 128:by * 128 + 128, 32:32 + 32], A_shared[1, 0:128, 0:32])
# TIR-NEXT: T.async_copy(B[32:32 + 32, bx * 128:bx * 128 + 128], B_shared[1, 0:32, 0:128])
# TIR-NEXT: T.ptx_commit_group()
# TIR-NEXT: for ko in T.serial(4, annotations={"num_stages": 3}):
# TIR-NEXT: T.ptx_wait_group(1)
# TIR-NEXT: T.sync_threads()
# TIR-NEXT: if ko + 2 < 4:
# TIR-NEXT: T.async_copy(A[by * 128:by * 128 + 128, (ko + 2) * 32:(ko + 2) * 32 + 32], A_shared[(ko + 2) % 3, 0:128, 0:32])
# TIR-NEXT: T.async_copy(B[(ko + 2) * 32:(ko + 2) * 32 + 32, bx * 128:bx * 128 + 128], B_shared[(ko + 2) % 3, 0:32, 0:128])
# TIR-NEXT: T.ptx_commit_group()
# TIR-NEXT: T.gemm(A_shared[ko % 3, 0:128, 0:32], B_shared[ko % 3, 0:32, 0:128], C_local)
# The barrier pass proves the stages disjoint and adds nothing.
# TIR-LABEL: // ----- after barriers -----
# TIR-NOT: T.sync_threads()
# TIR: for ko in T.serial(4, annotations={"num_stages": 3}):
# TIR-NEXT: T.ptx_wait_group(1)
# TIR-NEXT: T.sync_threads()
# TIR-NOT: T.sync_threads()
# TIR: // ----- after versioning -----
# TIR: // ----- after layout-inference -----
# TIR: // ----- after lower-tile-ops -----
# TIR: for ko in T.serial(4, annotations={"num_stages": 3}):
# TIR: T.ptx_cp_async(A_shared, {{.*}}, A, {{.*}}, 16, True)
# frag-pipeline, the last reader of the stage count, drops it: SIMT IR after it has none.
# TIR: // ----- after frag-pipeline -----
# TIR-NOT: annotations=
# TIR: // ----- after rasterize -----
# TIR: // ----- after smem-plan -----

# PTX: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16;
# PTX: cp.async.commit_group;
# PTX: cp.async.wait_group 1;
# PTX-NEXT: bar.sync {{[[:space:]]*}}0;
# MMA: mma.sync.aligned.m16n8k16
