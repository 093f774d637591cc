# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check --kernel=partial_then_combine %s | FileCheck %s --check-prefix=RUN2
# RUN: %tl-run --device=cpu --check --kernel=three_kernels %s | FileCheck %s --check-prefix=RUN3
# RUN: %tl-run --device=cpu --check --kernel=dynamic_two %s --dim n=1,100,1000 | FileCheck %s --check-prefix=DYN
# RUN: %tl-run --device=cpu --check --kernel=global_workspace %s | FileCheck %s --check-prefix=GWS
# RUN: %tl-opt --kernel=global_workspace %s | FileCheck %s --check-prefix=GWS-TIR
# RUN: %tl-opt --kernel=global_workspace %s | %tl-opt | FileCheck %s --check-prefix=GWS-TIR
# RUN: %tl-opt --emit=simt --kernel=global_workspace %s | FileCheck %s --check-prefix=GWS-SIMT
# RUN: %tl-opt --emit=ptx --kernel=global_workspace %s | FileCheck %s --check-prefix=GWS-PTX
# RUN: %tl-opt --kernel=partial_then_combine %s | FileCheck %s --check-prefix=TIR
# RUN: %tl-opt --emit=simt --kernel=partial_then_combine %s | FileCheck %s --check-prefix=SIMT
# RUN: %tl-opt --emit=ptx --kernel=partial_then_combine %s | FileCheck %s --check-prefix=PTX
# RUN: %tl-opt --emit=ptx --target=sm_90a --kernel=dynamic_two %s | FileCheck %s --check-prefix=PTX90
# Several `with T.Kernel(...)` scopes in one @T.prim_func (issue 30; TileLang's
# flash_decoding: a split-KV kernel writes partial results, a combine kernel
# reduces them): the stages of one launch sequence, each its own grid, threads
# and shared memory, sharing the prim_func's tensors; one call, one out_idx.
#  - partial_then_combine: A is int32 A[i] = ?, given by tl-run; kernel 1
#    (8 blocks of 64 threads) writes each block's sum of A into Partial[bx]
#    (through a shared buffer and T.reduce_sum), kernel 2 (1 block of 32)
#    writes Out[0] = the sum of the 8 partials and Out[1] = their max.  The
#    exact values are checked against the reference evaluator (integers:
#    exact), whose run of the tile IR runs the two scopes in order.
#  - three_kernels: Out = ((iota * 2) + 1) * 3 over 3 kernels through two
#    intermediate tensors: Out[i] = 6 i + 3, sum over i < 256 = 6 * 32640 +
#    768 = 196608.
#  - global_workspace: TileLang's flash_decoding form (examples/flash_decoding
#    at tile-ai/tilelang HEAD): the partial results in T.alloc_global buffers
#    written before the scopes, shared by both: kernel 1 (4 blocks) writes
#    block sums and maxima of A into Psum / Pmax, kernel 2 combines them
#    into Out = [sum, max]; every stage takes the same workspace pointers
#    (zeroed once per call), the CPU executor hands the storage from stage to
#    stage.  Checked exactly against the reference evaluator.
#  - dynamic_two: a dynamic n; kernel 1 writes Tmp[i] = i + 1 over
#    ceildiv(n, 128) blocks, kernel 2 Out[i] = Tmp[n - 1 - i] * 2 (a reversal:
#    reads other blocks' writes of the first launch); sum 2 * n(n+1)/2 =
#    n(n+1).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[2])
def partial_then_combine(N=512, block=64):
    nb = N // block

    @T.prim_func
    def decode(A: T.Tensor((N,), "int32"), Partial: T.Tensor((nb,), "int32"), Out: T.Tensor((2,), "int32")):
        with T.Kernel(nb, threads=block) as bx:
            S = T.alloc_shared((block,), "int32")
            acc = T.alloc_fragment((1,), "int32")
            T.copy(A[bx * block:(bx + 1) * block], S)
            T.reduce_sum(S, acc, dim=0)
            T.copy(acc, Partial[bx:bx + 1])
        with T.Kernel(1, threads=32) as bx:
            P = T.alloc_shared((nb,), "int32")
            s = T.alloc_fragment((1,), "int32")
            m = T.alloc_fragment((1,), "int32")
            T.copy(Partial[0:nb], P)
            T.reduce_sum(P, s, dim=0)
            T.reduce_max(P, m, dim=0)
            T.copy(s, Out[0:1])
            T.copy(m, Out[1:2])

    return decode


@tilelang.jit(out_idx=-1)
def three_kernels(N=256):
    @T.prim_func
    def chain(T1: T.Tensor((N,), "int32"), T2: T.Tensor((N,), "int32"), Out: T.Tensor((N,), "int32")):
        with T.Kernel(N // 128, threads=128) as bx:
            for i in T.Parallel(128):
                T1[bx * 128 + i] = (bx * 128 + i) * 2
        with T.Kernel(N // 64, threads=64) as bx:
            for i in T.Parallel(64):
                T2[bx * 64 + i] = T1[bx * 64 + i] + 1
        with T.Kernel(N // 32, threads=32) as bx:
            for i in T.Parallel(32):
                Out[bx * 32 + i] = T2[bx * 32 + i] * 3

    return chain


@tilelang.jit(out_idx=-1)
def global_workspace(N=512, blocks=4):
    chunk = N // blocks

    @T.prim_func
    def gws(A: T.Tensor((N,), "int32"), Out: T.Tensor((2,), "int32")):
        Psum = T.alloc_global((blocks,), "int32")
        Pmax = T.alloc_global((blocks,), "int32")
        with T.Kernel(blocks, threads=128) as bx:
            S = T.alloc_shared((chunk,), "int32")
            s = T.alloc_fragment((1,), "int32")
            m = T.alloc_fragment((1,), "int32")
            T.copy(A[bx * chunk:(bx + 1) * chunk], S)
            T.reduce_sum(S, s, dim=0)
            T.reduce_max(S, m, dim=0)
            T.copy(s, Psum[bx:bx + 1])
            T.copy(m, Pmax[bx:bx + 1])
        with T.Kernel(1, threads=32) as bx:
            P = T.alloc_shared((blocks,), "int32")
            Q = T.alloc_shared((blocks,), "int32")
            t = T.alloc_fragment((1,), "int32")
            u = T.alloc_fragment((1,), "int32")
            T.copy(Psum, P)
            T.copy(Pmax, Q)
            T.reduce_sum(P, t, dim=0)
            T.reduce_max(Q, u, dim=0)
            T.copy(t, Out[0:1])
            T.copy(u, Out[1:2])

    return gws


@tilelang.jit(out_idx=-1)
def dynamic_two():
    n = T.dynamic("n")

    @T.prim_func
    def rev(Tmp: T.Tensor((n,), "int32"), Out: T.Tensor((n,), "int32")):
        with T.Kernel(T.ceildiv(n, 128), threads=128) as bx:
            for i in T.Parallel(128):
                if bx * 128 + i < n:
                    Tmp[bx * 128 + i] = bx * 128 + i + 1
        with T.Kernel(T.ceildiv(n, 256), threads=256) as bx:
            for i in T.Parallel(256):
                if bx * 256 + i < n:
                    Out[bx * 256 + i] = Tmp[n - 1 - (bx * 256 + i)] * 2

    return rev

# RUN2: output Out shape=[2] dtype=int32
# RUN2-NEXT: check: PASS
# RUN3: output Out shape=[256] dtype=int32 sum=196608 abs_sum=196608
# RUN3-NEXT: check: PASS
# DYN: n=1
# DYN: sum=2
# DYN: check: PASS
# DYN: n=100
# DYN: sum=10100
# DYN: check: PASS
# DYN: n=1000
# DYN: sum=1.001e+06
# DYN: check: PASS
# GWS: output Out shape=[2] dtype=int32
# GWS-NEXT: check: PASS
# GWS-TIR: T.func_attr({"out_idx": [1]})
# GWS-TIR-NEXT: Psum = T.alloc_global((4,), "int32")
# GWS-TIR-NEXT: Pmax = T.alloc_global((4,), "int32")
# GWS-TIR-NEXT: with T.Kernel(4, threads=128) as bx:
# GWS-TIR: with T.Kernel(1, threads=32) as bx:
# GWS-TIR-NEXT: P = T.alloc_shared((4,), "int32")
# GWS-SIMT: def gws(
# GWS-SIMT: Psum = T.alloc_global((4,), "int32")
# GWS-SIMT-NEXT: Pmax = T.alloc_global((4,), "int32")
# GWS-SIMT: def gws_kernel_1(
# GWS-SIMT: Psum = T.alloc_global((4,), "int32")
# GWS-SIMT-NEXT: Pmax = T.alloc_global((4,), "int32")
# GWS-PTX: .entry gws(
# GWS-PTX-NEXT: .param .u64 gws_param_0,
# GWS-PTX-NEXT: .param .u64 gws_param_1,
# GWS-PTX-NEXT: .param .u64 gws_param_2,
# GWS-PTX-NEXT: .param .u64 gws_param_3
# GWS-PTX: .entry gws_kernel_1(
# GWS-PTX-NEXT: .param .u64 gws_kernel_1_param_0,
# GWS-PTX-NEXT: .param .u64 gws_kernel_1_param_1,
# GWS-PTX-NEXT: .param .u64 gws_kernel_1_param_2,
# GWS-PTX-NEXT: .param .u64 gws_kernel_1_param_3
# TIR: with T.Kernel(8, threads=64) as bx:
# TIR: with T.Kernel(1, threads=32) as bx:
# SIMT: def decode(
# SIMT: with T.Kernel(8, threads=64) as bx:
# SIMT: def decode_kernel_1(
# SIMT: with T.Kernel(1, threads=32) as bx:
# PTX: .entry decode(
# PTX: .entry decode_kernel_1(
# PTX90: .entry rev(
# PTX90: .entry rev_kernel_1(
