# RUN: %tl-opt --emit=simt -D M=503 -D N=1017 -D K=763 -D block_M=128 -D block_N=256 -D block_K=32 -D threads=256 -D num_stages=2 %examples/gemm.py | FileCheck %s
# RUN: %tl-opt --emit=ptx -D M=503 -D N=1017 -D K=763 -D block_M=128 -D block_N=256 -D block_K=32 -D threads=256 -D num_stages=2 %examples/gemm.py | FileCheck %s --check-prefix=PTX
# RUN: %tl-opt --emit=simt -D M=503 -D N=1024 -D K=764 -D block_M=128 -D block_N=256 -D block_K=32 -D threads=256 -D num_stages=2 %examples/gemm.py | FileCheck %s --check-prefix=EIGHT
# (503, 1017, 763): f16 rows of K = 763 and N = 1017 elements are only
# 2-byte aligned, so the pipelined copies are synchronous scalar copies (a
# zero for each element outside A or B: partial tiles are zero-filled) and no
# cp.async is issued.  With K = 764 (8-byte rows) A is copied with 8-byte
# cp.async, predicated on its row and column being in bounds (zero-fill).

# (frag_pipeline.c: the loop's first wait and barrier come before it, the
# others before the last k-step's mma)
# CHECK: T.ptx_wait_group(0)
# CHECK-NEXT: T.sync_threads()
# CHECK: for ko in T.serial(24):
# CHECK: if ko + 1 < 24:
# CHECK: if by * 128 + {{.*}} < 503 and (ko + 1) * 32 + {{.*}} < 763:
# CHECK-NEXT: A_shared[{{.*}}] = A[by * 128 + {{.*}}, (ko + 1) * 32 + {{.*}}]
# CHECK-NEXT: else:
# CHECK-NEXT: A_shared[{{.*}}] = T.float16(0.0)
# CHECK-NOT: ptx_cp_async
# CHECK-NOT: _shared[T.Ramp

# PTX-NOT: cp.async.cg
# PTX-NOT: cp.async.ca

# EIGHT: T.ptx_cp_async(A_shared, {{.*}}, A, {{.*}}, 8, by * 128 + {{.*}} < 503)
# EIGHT: T.ptx_cp_async(B_shared, {{.*}}, B, {{.*}}, 16, True)
