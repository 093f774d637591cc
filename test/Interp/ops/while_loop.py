# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check --out-idx=none --kernel=while_streamk %s | FileCheck %s --check-prefix=SK
# RUN: %tl-run --device=cpu --check --out-idx=none --target=sm_90a --kernel=while_streamk %s | FileCheck %s --check-prefix=SK
# RUN: %tl-run --device=cpu --check --out-idx=none --schedule-seed=3 --kernel=while_streamk %s | FileCheck %s --check-prefix=SK
# RUN: %tl-run --device=cpu --check --int-range 0:4 --kernel=while_count %s | FileCheck %s --check-prefix=COUNT
# RUN: %tl-run --device=cpu --check --kernel=while_per_thread %s | FileCheck %s --check-prefix=PT
# RUN: %tl-opt --remarks --target=sm_90a --emit=simt --kernel=while_streamk %s 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
# RUN: %tl-opt --kernel=while_streamk %s > %t.tir && %tl-opt %t.tir | diff %t.tir -
# RUN: not %tl-run --device=cpu --check --kernel=while_forever %s 2>&1 | FileCheck %s --check-prefix=FOREVER
# RUN: not %tl-run --device=cpu --kernel=while_racy %s 2>&1 | FileCheck %s --check-prefix=RACY
# `while COND:` loops in a kernel body (TVM's tir.While: the condition is
# evaluated before each iteration), checked on the CPU SIMT executor against
# the reference evaluator:
#  - while_streamk: TileLang's stream-K GEMM (examples/gemm_streamk), reduced
#    to 4 programs over 6 tiles of 5 k-iterations: each program walks its
#    share of the k-iterations with `while start_iter[0] < last_iter:`,
#    crossing tile boundaries; a T.Pipelined loop of a run-time trip count,
#    T.gemm, and T.atomic_add of partial tiles in its body; then one
#    data-parallel tile per program.  Also on sm_90a (its loops stay on the
#    cp.async + mma.sync path, with a remark) and under a shuffled schedule.
#  - while_count: each block reads its trip count from a tensor (0 to 4).
#  - while_per_thread: a per-thread program whose threads run different
#    trip counts: allowed, the body holds per-thread scalar work only.
#  (A condition that may differ between the threads around tile work is a
#  compile-time error: test/Lower/while_uniform.py.)
#  - while_forever: a loop whose condition never becomes false: reported,
#    not a hang.
#  - while_racy: the condition reads a global counter the body increments
#    with atomics: warps see different values, leave the loop at different
#    iterations, and the executor reports the divergent barrier.
# SK: check: PASS
# COUNT: check: PASS
# PT: check: PASS
# REMARK: remark: T.Pipelined loop stays on the cp.async + mma.sync path: the kernel has a 'while' loop
# FOREVER: error: this 'while' loop ran 65536 iterations and its condition still holds
# RACY: error: data race on global memory: thread {{[0-9]+}} reads 'Cnt'[0]
import tilelang
import tilelang.language as T

total_sm = 4
m, n, k = 48, 64, 160
BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K = 16, 32, 32
num_block_m = tilelang.cdiv(m, BLOCK_SIZE_M)
num_block_n = tilelang.cdiv(n, BLOCK_SIZE_N)
iters_per_tile = tilelang.cdiv(k, BLOCK_SIZE_K)
total_tiles = num_block_m * num_block_n
streamk_programs = total_sm
streamk_tiles = total_tiles % streamk_programs
if total_tiles - streamk_tiles > streamk_programs:
    streamk_tiles += streamk_programs
blocking_tiles = total_tiles - streamk_tiles
streamk_iters = streamk_tiles * iters_per_tile
streamk_full_tiles = streamk_iters // streamk_programs
streamk_partial_tiles = streamk_iters % streamk_programs
sm_patition_factor = max(blocking_tiles // total_sm, 1)


@tilelang.jit
def while_streamk(M=m, N=n, K=k, streamk_tiles=streamk_tiles, block_M=BLOCK_SIZE_M, block_N=BLOCK_SIZE_N,
                  block_K=BLOCK_SIZE_K, trans_B=True, dtypeAB="float16", dtypeC="float32", accum_dtype="float32",
                  num_stages=2, threads=64):
    B_shape = (N, K) if trans_B else (K, N)
    B_shared_shape = (block_N, block_K) if trans_B else (block_K, block_N)

    @T.prim_func
    def streamk_main(A: T.Tensor((M, K), dtypeAB), B: T.Tensor(B_shape, dtypeAB), C: T.Tensor((M, N), dtypeC)):
        with T.Kernel(streamk_programs, threads=threads) as pid:
            A_shared = T.alloc_shared((block_M, block_K), dtypeAB)
            B_shared = T.alloc_shared(B_shared_shape, dtypeAB)
            A_shared_full_tiles = T.alloc_shared((block_M, block_K), dtypeAB)
            B_shared_full_tiles = T.alloc_shared(B_shared_shape, dtypeAB)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            start_iter = T.alloc_fragment((1,), T.int32, "local")
            end_iter = T.alloc_fragment((1,), T.int32, "local")
            start_iter[0] = pid * streamk_full_tiles + T.min(pid, streamk_partial_tiles)
            last_iter = (pid + 1) * streamk_full_tiles + T.min(pid + 1, streamk_partial_tiles)
            while start_iter[0] < last_iter:
                end_iter[0] = T.min(start_iter[0] + (iters_per_tile - (start_iter[0] % iters_per_tile)), last_iter)
                tile_id = start_iter[0] // iters_per_tile
                remain_iters = start_iter[0] % iters_per_tile
                pid_m = tile_id // T.ceildiv(N, block_N)
                pid_n = tile_id % T.ceildiv(N, block_N)
                T.clear(C_local)
                for k in T.Pipelined(end_iter[0] - start_iter[0], num_stages=num_stages):
                    T.copy(A[pid_m * block_M, (k + (start_iter[0] % iters_per_tile)) * block_K], A_shared)
                    T.copy(B[pid_n * block_N, (k + (start_iter[0] % iters_per_tile)) * block_K], B_shared)
                    T.gemm(A_shared, B_shared, C_local, transpose_B=trans_B)
                if remain_iters == 0 and (end_iter[0] % iters_per_tile == 0):
                    T.copy(C_local, C[pid_m * block_M, pid_n * block_N])
                else:
                    for i, j in T.Parallel(block_M, block_N):
                        T.atomic_add(C[pid_m * block_M + i, pid_n * block_N + j], C_local[i, j])
                start_iter[0] = end_iter[0]
            if sm_patition_factor > 0:
                for p in T.serial(sm_patition_factor):
                    tile_id = pid + streamk_tiles + p * total_sm
                    pid_m = tile_id // T.ceildiv(N, block_N)
                    pid_n = tile_id % T.ceildiv(N, block_N)
                    T.clear(C_local)
                    for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=1):
                        T.copy(A[pid_m * block_M, k * block_K], A_shared_full_tiles)
                        T.copy(B[pid_n * block_N, k * block_K], B_shared_full_tiles)
                        T.gemm(A_shared_full_tiles, B_shared_full_tiles, C_local, transpose_B=trans_B)
                    T.copy(C_local, C[pid_m * block_M, pid_n * block_N])

    return streamk_main


@tilelang.jit(out_idx=[2])
def while_count(blocks=4, W=32, max_iters=4):
    @T.prim_func
    def count_main(A: T.Tensor((blocks, max_iters * W), "float32"), Counts: T.Tensor((blocks,), "int32"),
                   Out: T.Tensor((blocks, W), "float32")):
        with T.Kernel(blocks, threads=64) as bx:
            S = T.alloc_shared((W,), "float32")
            acc = T.alloc_fragment((W,), "float32")
            i = T.alloc_var("int32")
            i = 0
            T.clear(acc)
            while i < T.min(Counts[bx], max_iters):
                T.copy(A[bx, i * W], S)
                for j in T.Parallel(W):
                    acc[j] = acc[j] + S[j] * (i + 1)
                i = i + 1
            T.copy(acc, Out[bx, 0])

    return count_main


@tilelang.jit(out_idx=[1])
def while_per_thread(N=128):
    @T.prim_func
    def per_thread_main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=N) as bx:
            tx = T.get_thread_binding()
            k = T.alloc_var("int32")
            acc = T.alloc_var("float32")
            k = 0
            acc = 0.0
            while k < tx % 5:
                acc = acc + A[tx] * (k + 1)
                k = k + 1
            B[tx] = acc

    return per_thread_main


@tilelang.jit
def while_forever(N=32):
    @T.prim_func
    def forever_main(A: T.Tensor((N,), "int32"), B: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=32) as bx:
            i = T.alloc_var("int32")
            i = 0
            while i < 10:
                B[0] = A[0] + i

    return forever_main


@tilelang.jit
def while_racy(N=64):
    @T.prim_func
    def racy_main(A: T.Tensor((N,), "float32"), Cnt: T.Tensor((1,), "int32")):
        with T.Kernel(1, threads=64) as bx:
            S = T.alloc_shared((N,), "float32")
            while Cnt[0] < 1000:
                T.copy(A[0], S)
                for j in T.Parallel(N):
                    T.atomic_add(Cnt[0], 1)

    return racy_main
