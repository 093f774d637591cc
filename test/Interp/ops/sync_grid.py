# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check --kernel=grid_reverse %s | FileCheck %s --check-prefix=REV
# RUN: %tl-run --device=cpu --check --kernel=persistent_partials %s | FileCheck %s --check-prefix=PER
# RUN: %tl-run --device=cpu --check --kernel=persistent_partials -D sm_num=4 -D rows=7 %s | FileCheck %s --check-prefix=PER4
# RUN: %tl-run --device=cpu --check --kernel=thread_sides %s | FileCheck %s --check-prefix=THR
# RUN: %tl-run --device=cpu --check --kernel=workspace_sides %s | FileCheck %s --check-prefix=WSP
# RUN: %tl-opt --emit=simt --kernel=workspace_sides %s | FileCheck %s --check-prefix=WSP-SIMT
# RUN: %tl-run --device=cpu --check --kernel=barriers_at_ends %s | FileCheck %s --check-prefix=ENDS
# RUN: %tl-opt --emit=ptx --kernel=barriers_at_ends %s | FileCheck %s --check-prefix=ENDS-PTX
# RUN: %tl-opt --kernel=grid_reverse %s | FileCheck %s --check-prefix=TIR
# RUN: %tl-opt --kernel=grid_reverse %s | %tl-opt | FileCheck %s --check-prefix=TIR
# RUN: %tl-opt --emit=simt --kernel=grid_reverse %s | FileCheck %s --check-prefix=SIMT
# RUN: %tl-opt --emit=ptx --kernel=thread_sides %s | FileCheck %s --check-prefix=PTX
# RUN: %tl-opt --emit=ptx --target=sm_90a --kernel=persistent_partials %s | FileCheck %s --check-prefix=PTX90
# T.sync_grid(), TileLang's grid-wide barrier (issue 30; TileLang's
# tilelang/language/builtin.py: cooperative_groups::this_grid().sync() in a
# cooperatively launched kernel): every block finishes what stands before
# it before any block goes on.  Here a T.sync_grid() at the top level of a
# T.Kernel body splits the kernel into two launches of the same grid
# (docs/language.md "Grid barrier"); the reference evaluator runs each side
# over the whole grid before the next.  Each kernel reads, after the
# barrier, what other blocks wrote before it, so a lowering that ran the
# blocks' two sides one block after another (as the CPU executor runs
# blocks) reads unwritten elements and the check fails.
#  - grid_reverse: TileLang's own test (testing/python/language/
#    test_tilelang_language_cooperative.py) in the form we support: A[k] = k
#    before the barrier, Out[k] = A[k] + A[N - 1 - k] = N - 1 after it,
#    through a fragment allocated before the barrier and written after it;
#    n_idx = bx * block is a let of the block index, computed again after
#    the barrier.  Sum 1024 * 1023 = 1047552.
#  - persistent_partials: the form of TileLang's
#    examples/deepseek_mla/example_mla_decode_persistent.py: sm_num blocks
#    walk the (row, split) tiles in waves and write each tile's sum into
#    Partial, then walk the rows in waves and combine the splits of a row
#    into Out[row] = [sum, max] (alloc_var accumulators allocated before the
#    barrier, written again after it).  Integers: exact.
#  - thread_sides: per-thread code with two barriers (three launches):
#    Tmp[g] = g, then Tmp2[g] = Tmp[N - 1 - g], then Out[g] = Tmp2[N - 1 -
#    g] + Tmp[g] = 2 g; the lets tx and g are computed again on each side.
#    Sum N (N - 1) = 261632.
#  - workspace_sides: flash decoding's form (T.alloc_global workspaces W, V
#    before two T.Kernel scopes) with a barrier in the second scope: W[g] =
#    2 A[g]; V[g] = W[N - 1 - g] + 1; then Out[g] = V[N - 1 - g] + W[g] =
#    4 A[g] + 1.  Three stages, every one with the same workspaces.
#  - barriers_at_ends: barriers before the first statement, and two after
#    the last: sides of no statements are no launches (one entry point).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def grid_reverse(N=1024, block=64):
    @T.prim_func
    def reverse_k(A: T.Tensor((N,), "float32"), Out: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            A_local = T.alloc_fragment((block,), "float32")
            n_idx = bx * block
            for i in T.Parallel(block):
                A[n_idx + i] = n_idx + i
            T.sync_grid()
            for i in T.Parallel(block):
                A_local[i] = A[N - n_idx - i - 1]
            for i in T.Parallel(block):
                Out[n_idx + i] = A[n_idx + i] + A_local[i]

    return reverse_k


@tilelang.jit(out_idx=-1)
def persistent_partials(rows=10, num_split=4, chunk=64, sm_num=3):
    tiles = rows * num_split

    @T.prim_func
    def persistent_k(
        A: T.Tensor((rows, num_split * chunk), "int32"),
        Partial: T.Tensor((rows, num_split), "int32"),
        Out: T.Tensor((rows, 2), "int32"),
    ):
        with T.Kernel(sm_num, threads=64) as block_id:
            S = T.alloc_shared((chunk,), "int32")
            acc = T.alloc_fragment((1,), "int32")
            total = T.alloc_var("int32")
            top = T.alloc_var("int32")
            T.use_swizzle(10)
            waves = T.ceildiv(tiles, sm_num)
            for w in T.serial(waves):
                tile = sm_num * w + block_id
                row = tile // num_split
                sid = tile % num_split
                if row < rows:
                    T.copy(A[row, sid * chunk : (sid + 1) * chunk], S)
                    T.reduce_sum(S, acc, dim=0)
                    T.copy(acc, Partial[row, sid : sid + 1])
            T.sync_grid()
            waves = T.ceildiv(rows, sm_num)
            for w in T.serial(waves):
                row = sm_num * w + block_id
                if row < rows:
                    total = 0
                    top = Partial[row, 0]
                    for k in T.serial(num_split):
                        total += Partial[row, k]
                        top = T.max(top, Partial[row, k])
                    Out[row, 0] = total
                    Out[row, 1] = top

    return persistent_k


@tilelang.jit(out_idx=-1)
def thread_sides(N=512, threads=128):
    @T.prim_func
    def sides_k(Tmp: T.Tensor((N,), "int32"), Tmp2: T.Tensor((N,), "int32"), Out: T.Tensor((N,), "int32")):
        with T.Kernel(N // threads, threads=threads) as bx:
            tx = T.get_thread_binding()
            g = bx * threads + tx
            Tmp[g] = g
            T.sync_grid()
            Tmp2[g] = Tmp[N - 1 - g]
            T.sync_grid()
            Out[g] = Tmp2[N - 1 - g] + Tmp[g]

    return sides_k


@tilelang.jit(out_idx=-1)
def workspace_sides(N=256, blocks=4):
    chunk = N // blocks

    @T.prim_func
    def workspace_k(A: T.Tensor((N,), "int32"), Out: T.Tensor((N,), "int32")):
        W = T.alloc_global((N,), "int32")
        V = T.alloc_global((N,), "int32")
        with T.Kernel(blocks, threads=64) as bx:
            for i in T.Parallel(chunk):
                W[bx * chunk + i] = A[bx * chunk + i] * 2
        with T.Kernel(blocks, threads=64) as bx:
            for i in T.Parallel(chunk):
                V[bx * chunk + i] = W[N - 1 - (bx * chunk + i)] + 1
            T.sync_grid()
            for i in T.Parallel(chunk):
                Out[bx * chunk + i] = V[N - 1 - (bx * chunk + i)] + W[bx * chunk + i]

    return workspace_k


@tilelang.jit(out_idx=-1)
def barriers_at_ends(N=128):
    @T.prim_func
    def ends_k(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(4, threads=32) as bx:
            T.sync_grid()
            for i in T.Parallel(32):
                B[bx * 32 + i] = A[bx * 32 + i]
            T.sync_grid()
            T.sync_grid()

    return ends_k


# REV: output Out shape=[1024] dtype=float32 sum=1.04755e+06
# REV-NEXT: check: PASS
# PER: output Out shape=[10,2] dtype=int32
# PER-NEXT: check: PASS
# PER4: output Out shape=[7,2] dtype=int32
# PER4-NEXT: check: PASS
# THR: output Out shape=[512] dtype=int32 sum=261632
# THR-NEXT: check: PASS
# WSP: output Out shape=[256] dtype=int32
# WSP-NEXT: check: PASS
# WSP-SIMT: def workspace_k(
# WSP-SIMT: W = T.alloc_global((256,), "int32")
# WSP-SIMT-NEXT: V = T.alloc_global((256,), "int32")
# WSP-SIMT: def workspace_k_kernel_1(
# WSP-SIMT: W = T.alloc_global((256,), "int32")
# WSP-SIMT-NEXT: V = T.alloc_global((256,), "int32")
# WSP-SIMT: def workspace_k_kernel_2(
# WSP-SIMT: W = T.alloc_global((256,), "int32")
# WSP-SIMT-NEXT: V = T.alloc_global((256,), "int32")
# WSP-SIMT-NOT: alloc_global
# ENDS: output B shape=[128] dtype=float32
# ENDS-NEXT: check: PASS
# ENDS-PTX: .entry ends_k(
# ENDS-PTX-NOT: .entry
# TIR: with T.Kernel(16, threads=128) as bx:
# TIR-NEXT: A_local = T.alloc_fragment((64,), "float32")
# TIR: T.sync_grid()
# TIR-NEXT: for i in T.Parallel(64):
# SIMT: def reverse_k(
# SIMT: with T.Kernel(16, threads=128) as bx:
# SIMT-NOT: T.sync_grid
# SIMT: def reverse_k_kernel_1(
# SIMT: with T.Kernel(16, threads=128) as bx:
# SIMT-NOT: T.sync_grid
# PTX: .entry sides_k(
# PTX: .entry sides_k_kernel_1(
# PTX: .entry sides_k_kernel_2(
# PTX90: .entry persistent_k(
# PTX90: .entry persistent_k_kernel_1(
