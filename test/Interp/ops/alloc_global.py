# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check --kernel=alloc_global_copy %s | FileCheck %s --check-prefix=COPY
# RUN: %tl-run --device=cpu --check --kernel=alloc_global_atomic %s | FileCheck %s --check-prefix=ATOMIC
# RUN: %tl-run --device=cpu --check --kernel=alloc_global_elems %s | FileCheck %s --check-prefix=ELEMS
# RUN: %tl-opt --kernel=alloc_global_copy %s | FileCheck %s --check-prefix=TIR
# RUN: %tl-opt --emit=simt --kernel=alloc_global_atomic %s > %t.simt
# RUN: %tl-opt --passes=smem-plan %t.simt | FileCheck %s --check-prefix=SIMT
# RUN: %tl-opt --emit=ptx --target=sm_90a %t.simt | FileCheck %s --check-prefix=PTX
# T.alloc_global(shape, dtype) (TileLang's tilelang/language/allocate.py): a
# global buffer of the launch, shared by all blocks; written after TileLang's
# testing/python/language/test_tilelang_language_alloc.py (N = 1024, blocks of
# 128, float16: A copied through the global buffer C into B, so B == A).
# Here it is zeroed before every launch (docs/simt-ir.md "Kernel workspaces"):
# a kernel workspace at the top of the T.Kernel body (SIMT IR prints it as
# T.alloc_global and parses it back), a hidden pointer parameter after the
# tensors in the PTX.
#  - alloc_global_copy: TileLang's test; B == A, so the sums are A's.
#  - alloc_global_atomic: each of the 8 blocks' 128 threads adds its thread
#    index + 1 into C[bx] (T.atomic_add into the zeroed buffer), the block
#    syncs and copies C[bx] to Out[bx]: every Out[b] = 128 * 129 / 2 = 8256, sum 66048.
#  - alloc_global_elems: element stores and loads, C[i] = 3 * i, Out[i] =
#    C[i] + 1 over 256 int32 (sum 3 * 255 * 256 / 2 + 256 = 98176).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def alloc_global_copy(N=1024, block_N=128, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        C = T.alloc_global((N,), dtype)
        with T.Kernel(T.ceildiv(N, block_N), threads=block_N) as bx:
            T.copy(A[bx * block_N:(bx + 1) * block_N], C[bx * block_N:(bx + 1) * block_N])
            T.copy(C[bx * block_N:(bx + 1) * block_N], B[bx * block_N:(bx + 1) * block_N])

    return main


@tilelang.jit(out_idx=-1)
def alloc_global_atomic(blocks=8, threads=128):
    @T.prim_func
    def atomic(Out: T.Tensor((blocks,), "int32")):
        with T.Kernel(blocks, threads=threads) as bx:
            C = T.alloc_global((blocks,), "int32")
            for i in T.Parallel(threads):
                T.atomic_add(C[bx], i + 1)
            T.sync_threads()  # bar.sync orders the block's global atomics before the read
            T.copy(C[bx:bx + 1], Out[bx:bx + 1])

    return atomic


@tilelang.jit(out_idx=-1)
def alloc_global_elems(N=256, block=64):
    @T.prim_func
    def elems(Out: T.Tensor((N,), "int32")):
        C = T.alloc_global([N], "int32")
        with T.Kernel(N // block, threads=block) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = 3 * (bx * block + i)
            for i in T.Parallel(block):
                Out[bx * block + i] = C[bx * block + i] + 1

    return elems

# TIR: C = T.alloc_global((1024,), "float16")
# TIR-NEXT: T.copy(A[bx * 128:bx * 128 + 128], C[bx * 128:bx * 128 + 128])
# SIMT: with T.Kernel(8, threads=128) as bx:
# SIMT-NEXT: C = T.alloc_global((8,), "int32")
# SIMT-NEXT: T.ptx_atomic_add(C, bx, T.get_thread_binding(0) + 1, False)
# PTX: .param .u64 atomic_param_0,
# PTX-NEXT: .param .u64 atomic_param_1
# PTX: ld.param.u64 [[WS:%rd[0-9]+]], [atomic_param_1];
# PTX: atom.global.add.u32
# COPY: output B shape=[1024] dtype=float16 sum=-14.0126 abs_sum=504.248
# COPY-NEXT: check: PASS
# ATOMIC: output Out shape=[8] dtype=int32 sum=66048 abs_sum=66048
# ATOMIC-NEXT: check: PASS
# ELEMS: output Out shape=[256] dtype=int32 sum=98176 abs_sum=98176
# ELEMS-NEXT: check: PASS
