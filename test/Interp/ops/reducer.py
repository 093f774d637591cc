# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check --kernel=rows %s | FileCheck %s --check-prefix=SUM
# RUN: %tl-run --device=cpu --check --kernel=rows -D op=max %s | FileCheck %s --check-prefix=MAX
# RUN: %tl-run --device=cpu --check --kernel=rows -D op=min %s | FileCheck %s --check-prefix=MIN
# RUN: %tl-run --device=cpu --check --kernel=wide %s | FileCheck %s --check-prefix=WIDE
# RUN: %tl-run --device=cpu --check --kernel=gemm_rowmax %s | FileCheck %s --check-prefix=MMA
# RUN: %tl-run --device=cpu --check --kernel=per_row %s | FileCheck %s --check-prefix=PLAN
# RUN: %tl-run --device=cpu --check --kernel=gemv %s | FileCheck %s --check-prefix=GEMV
# RUN: %tl-run --device=cpu --check --kernel=gemv -D block_M=128 -D threads=256 -D num_stages=3 %s | FileCheck %s --check-prefix=GEMV
# RUN: %tl-opt --kernel=rows %s | FileCheck %s --check-prefix=TIR
# RUN: %tl-opt --kernel=rows %s | %tl-opt | FileCheck %s --check-prefix=TIR
# RUN: %tl-opt --emit=simt --kernel=wide %s | FileCheck %s --check-prefix=SIMT
# T.alloc_reducer(shape, dtype, op="sum"|"max"|"min", replication="all"|"none")
# and T.finalize_reducer(R) (TileLang's language/allocate.py and
# src/op/finalize_reducer.cc; the use of its gemv example): a fragment each
# thread accumulates its T.Parallel iterations into, then T.finalize_reducer
# combines the replicas of each element.  Every kernel is checked on the CPU
# SIMT executor against the reference evaluator (which runs the iterations in
# order into one reducer: the meaning); integer outputs are exact.
#  - rows: R[i] op= A_local[i, j] over an 8 x 64 int32 fragment, 128 threads:
#    each row's 64 columns are spread over 16 threads (4 each), combined by
#    shuffles (offsets 8, 4, 2, 1).
#  - wide: 2 rows of 512 over 256 threads: 128 threads a row, shuffles then
#    a combine across the 4 warps of a row through shared memory.
#  - gemm_rowmax: the row max of a T.gemm accumulator (mma.sync C layout:
#    a quad and the warp columns share a row).
#  - per_row: a 1-D T.Parallel over the rows, each row's min by its one
#    thread (replication="none"): nothing to combine.
#  - gemv: TileLang's gemv_alloc_reducer (its buffers allocated before the
#    T.Pipelined loop; x read from shared memory), float16 in, float32 accumulation.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def rows(M=8, N=64, threads=128, op="sum"):
    @T.prim_func
    def rows_k(A: T.Tensor((M, N), "int32"), B: T.Tensor((M,), "int32")):
        with T.Kernel(1, threads=threads) as bx:
            A_local = T.alloc_fragment((M, N), "int32")
            R = T.alloc_reducer((M,), "int32", op=op, replication="all")
            T.copy(A, A_local)
            if op == "sum":
                T.clear(R)
            elif op == "max":
                T.fill(R, -2147483648)
            else:
                T.fill(R, 2147483647)
            for i, j in T.Parallel(M, N):
                if op == "sum":
                    R[i] += A_local[i, j]
                elif op == "max":
                    R[i] = T.max(R[i], A_local[i, j])
                else:
                    R[i] = T.min(A_local[i, j], R[i])
            T.finalize_reducer(R)
            T.copy(R, B)

    return rows_k


@tilelang.jit(out_idx=-1)
def wide(M=2, N=512, threads=256):
    @T.prim_func
    def wide_k(A: T.Tensor((M, N), "int32"), B: T.Tensor((M,), "int32")):
        with T.Kernel(1, threads=threads) as bx:
            A_local = T.alloc_fragment((M, N), "int32")
            R = T.alloc_reducer((M,), "int32")
            T.copy(A, A_local)
            T.clear(R)
            for i, j in T.Parallel(M, N):
                R[i] += A_local[i, j]
            T.finalize_reducer(R)
            T.copy(R, B)

    return wide_k


@tilelang.jit(out_idx=-1)
def gemm_rowmax(M=64, N=64, K=32):
    @T.prim_func
    def mma_k(A: T.Tensor((M, K), "float16"), Bm: T.Tensor((K, N), "float16"), O: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            As = T.alloc_shared((M, K), "float16")
            Bs = T.alloc_shared((K, N), "float16")
            C = T.alloc_fragment((M, N), "float32")
            R = T.alloc_reducer((M,), "float32", op="max", replication="all")
            T.copy(A, As)
            T.copy(Bm, Bs)
            T.clear(C)
            T.gemm(As, Bs, C)
            T.fill(R, -T.infinity("float32"))
            for i, j in T.Parallel(M, N):
                R[i] = T.max(R[i], C[i, j])
            T.finalize_reducer(R)
            T.copy(R, O)

    return mma_k


@tilelang.jit(out_idx=-1)
def per_row(M=128, K=16):
    @T.prim_func
    def plan_k(A: T.Tensor((M, K), "int32"), B: T.Tensor((M,), "int32")):
        with T.Kernel(1, threads=128) as bx:
            R = T.alloc_reducer((M,), "int32", op="min", replication="none")
            T.fill(R, 2147483647)
            for i in T.Parallel(M):
                for k in T.serial(K):
                    R[i] = T.min(R[i], A[i, k])
            T.finalize_reducer(R)
            T.copy(R, B)

    return plan_k


@tilelang.jit(out_idx=-1)
def gemv(M=256, N=512, block_M=64, block_N=128, num_stages=2, threads=128, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def gemv_k(x: T.Tensor((N,), dtype), a: T.Tensor((M, N), dtype), o: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as i0_m:
            o_reducer = T.alloc_reducer(block_M, accum_dtype, replication="all")
            a_smem = T.alloc_shared((block_M, block_N), dtype)
            a_frag = T.alloc_fragment((block_M, block_N), dtype)
            x_smem = T.alloc_shared(block_N, dtype)
            T.clear(o_reducer)
            for i0_n in T.Pipelined(T.ceildiv(N, block_N), num_stages=num_stages):
                T.copy(a[i0_m * block_M, i0_n * block_N], a_smem)
                T.copy(a_smem, a_frag)
                T.copy(x[i0_n * block_N], x_smem)
                for i1_m, i1_n in T.Parallel(block_M, block_N):
                    o_reducer[i1_m] += T.cast(a_frag[i1_m, i1_n], accum_dtype) * T.cast(x_smem[i1_n], accum_dtype)
            T.finalize_reducer(o_reducer)
            T.copy(o_reducer, o[i0_m * block_M])

    return gemv_k

# SUM: check: PASS
# MAX: check: PASS
# MIN: check: PASS
# WIDE: check: PASS
# MMA: check: PASS
# PLAN: check: PASS
# GEMV: check: PASS
# TIR: R = T.alloc_reducer((8,), "int32", op="sum", replication="all")
# TIR-NEXT: T.copy(A, A_local)
# TIR-NEXT: T.clear(R)
# TIR-NEXT: for i, j in T.Parallel(8, 64):
# TIR-NEXT: R[i] = R[i] + A_local[i, j]
# TIR-NEXT: T.finalize_reducer(R)
# SIMT: T.shfl_xor(red_acc[{{.*}}], 16, 32)
# SIMT: T.shfl_xor(red_acc[{{.*}}], 1, 32)
# SIMT: red_ws = T.alloc_shared((256,), "int32")
# SIMT: T.sync_threads()
