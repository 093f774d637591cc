# REQUIRES: tl-run
# RUN: %tl-run --device=cpu --check --kernel=reshape_global %s | FileCheck %s --check-prefix=SAME
# RUN: %tl-run --device=cpu --check --kernel=reshape_global -D N=2048 -D M=64 -D dtype=float16 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=reshape_smem_1d_2_2d %s | FileCheck %s --check-prefix=SAME
# RUN: %tl-run --device=cpu --check --kernel=reshape_smem_2d_2_1d %s | FileCheck %s --check-prefix=SAME
# RUN: %tl-run --device=cpu --check --kernel=reshape_smem_2d_2_1d -D N=2048 -D M=64 -D dtype=float16 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=reshape_fragment %s | FileCheck %s --check-prefix=SAME
# RUN: %tl-run --device=cpu --check --kernel=view_global %s | FileCheck %s --check-prefix=SAME
# RUN: %tl-run --device=cpu --check --kernel=view_elements %s | FileCheck %s --check-prefix=ZERO
# RUN: %tl-run --device=cpu --check --kernel=reshape_fragment_iota %s | FileCheck %s --check-prefix=ZERO
# RUN: %tl-run --device=cpu --check --kernel=view_dtype %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=view_dtype -D N=2048 -D M=64 -D dtype=float16 -D new_dtype=float32 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=view_dtype -D dtype=float32 -D new_dtype=int8 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --kernel=view_dtype_round_trip %s | FileCheck %s --check-prefix=ZERO
# RUN: %tl-run --device=cpu --check --kernel=view_dtype_one %s | FileCheck %s --check-prefix=ONE
# RUN: %tl-opt --kernel=reshape_smem_1d_2_2d %s | FileCheck %s --check-prefix=TIR
# T.reshape / T.view with the dtype kept (TileLang's customize.py; the
# kernels and sizes of its testing/python/language reshape and view tests:
# 1024 float32 as 32x32, 2048 float16 as 32x64, global, shared and fragment
# sources copied into the reshaped output).  B is A reshaped, so B's element
# sums are those of tl-run's 1024 float32 inputs of seed 0 (SAME; the same
# sums as A's in test/Interp/ops/atomic_max_min.py), and every element is
# checked against the reference
# evaluator (the same elaborated IR: the row-major mapping itself is checked
# exactly by view_elements and reshape_fragment_iota, below).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def reshape_global(N=1024, M=32, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N // M, M), dtype)):
        with T.Kernel(1) as _:
            A_reshaped = T.reshape(A, [N // M, M])
            T.copy(A_reshaped, B)

    return main


@tilelang.jit(out_idx=-1)
def reshape_smem_1d_2_2d(N=1024, M=32, dtype="float32"):
    @T.prim_func
    def smem12(A: T.Tensor((N,), dtype), B: T.Tensor((N // M, M), dtype)):
        with T.Kernel(1) as _:
            A_shared = T.alloc_shared((N,), dtype)
            for i in T.Parallel(N):
                A_shared[i] = A[i]
            A_smem_reshaped = T.reshape(A_shared, [N // M, M])
            T.copy(A_smem_reshaped, B)

    return smem12


@tilelang.jit(out_idx=-1)
def reshape_smem_2d_2_1d(N=1024, M=32, dtype="float32"):
    @T.prim_func
    def smem21(A: T.Tensor((N // M, M), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1) as _:
            A_shared = T.alloc_shared((N // M, M), dtype)
            for i, j in T.Parallel(N // M, M):
                A_shared[i, j] = A[i, j]
            A_smem_reshaped = T.reshape(A_shared, [N])
            T.copy(A_smem_reshaped, B)

    return smem21


@tilelang.jit(out_idx=-1)
def reshape_fragment(N=1024, M=32, dtype="float32"):
    @T.prim_func
    def frag(A: T.Tensor((N // M, M), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=32) as _:
            A_shared = T.alloc_shared((N // M, M), dtype, scope="shared")
            A_local = T.alloc_fragment((N // M, M), dtype)
            B_shared = T.alloc_shared((N,), dtype, scope="shared")
            T.copy(A, A_shared)
            T.copy(A_shared, A_local)
            A_local_reshape = T.reshape(A_local, [N])
            T.copy(A_local_reshape, B_shared)
            T.copy(B_shared, B)

    return frag


@tilelang.jit(out_idx=-1)
def view_global(N=1024, M=32, dtype="float32"):
    @T.prim_func
    def viewg(A: T.Tensor((N,), dtype), B: T.Tensor((N // M, M), dtype)):
        with T.Kernel(1) as _:
            A_viewed = T.view(A, [N // M, M], dtype=None)
            T.copy(A_viewed, B)

    return viewg


# Element accesses through views, checked exactly: every element of B is
# (the value read through a view) - (the row-major position it should come
# from), so B is all zeros (abs_sum=0) exactly when the views map positions
# row-major.  S holds its row-major position (written through a 1-D view of
# it); B is written through a 4x32 view of it (=, then +=); A is read through
# a 32x4 view of it.
@tilelang.jit(out_idx=-1)
def view_elements():
    @T.prim_func
    def elems(A: T.Tensor((128,), "float32"), B: T.Tensor((8, 16), "float32")):
        with T.Kernel(1, threads=128) as _:
            Bv = T.view(B, (4, 32))
            Av = T.reshape(A, (32, 4))
            S = T.alloc_shared((2, 64), "float32")
            Sv = T.reshape(S, (128,))
            for i in T.Parallel(128):
                Sv[i] = T.Cast("float32", i)
            for i, j in T.Parallel(4, 32):
                Bv[i, j] = S[i // 2, (i % 2) * 32 + j] - T.Cast("float32", i * 32 + j)
            for i, j in T.Parallel(4, 32):
                Bv[i, j] += Av[i * 8 + j // 4, j % 4] - A[i * 32 + j]

    return elems


# The same for a fragment view: F[i, j] = i * 32 + j, reshaped to 1024 and
# copied to shared; B[k] = that - k is all zeros.
@tilelang.jit(out_idx=-1)
def reshape_fragment_iota():
    @T.prim_func
    def fiota(B: T.Tensor((1024,), "float32")):
        with T.Kernel(1, threads=32) as _:
            F = T.alloc_fragment((32, 32), "float32")
            S = T.alloc_shared((1024,), "float32")
            for i, j in T.Parallel(32, 32):
                F[i, j] = T.Cast("float32", i * 32 + j)
            Fv = T.reshape(F, [1024])
            T.copy(Fv, S)
            for k in T.Parallel(1024):
                B[k] = S[k] - T.Cast("float32", k)

    return fiota

# Views that change the dtype (TileLang's view test: 1024 float32 as 32x64
# float16, 2048 float16 as 32x32 float32; also float32 as int8): B holds A's
# bytes, read through the view.
@tilelang.jit(out_idx=-1)
def view_dtype(N=1024, M=32, dtype="float32", new_dtype="float16"):
    bits = {"float32": 32, "float16": 16, "bfloat16": 16, "int8": 8}
    cols = M * bits[dtype] // bits[new_dtype]

    @T.prim_func
    def viewd(A: T.Tensor((N,), dtype), B: T.Tensor((N // M, cols), new_dtype)):
        with T.Kernel(1) as _:
            A_viewed = T.view(A, [N // M, cols], dtype=new_dtype)
            T.copy(A_viewed, B)

    return viewd


# float32 -> int16 pairs (a global view) -> shared -> float32 again (a view
# of the shared tile): B = that - A is all zeros.  (Through integers: the CPU
# executors hold floats as values, so a float16 NaN's payload would not
# survive a float16 round trip there.)
@tilelang.jit(out_idx=-1)
def view_dtype_round_trip(N=256):
    @T.prim_func
    def trip(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128) as _:
            S = T.alloc_shared((2 * N,), "int16")
            T.copy(T.view(A, (2 * N,), dtype="int16"), S)
            Sv = T.view(S, (N,), dtype="float32")
            for i in T.Parallel(N):
                B[i] = Sv[i] - A[i]

    return trip


# float32 1.0 is 0x3F800000: as two float16 its low half is 0x0000 (0.0) and
# its high half 0x3F80 (1.875), so B = [0, 1.875].
@tilelang.jit(out_idx=-1)
def view_dtype_one():
    @T.prim_func
    def one(B: T.Tensor((2,), "float16")):
        with T.Kernel(1, threads=32) as _:
            S = T.alloc_shared((1,), "float32")
            S[0] = 1.0
            V = T.view(S, (-9223372036854775808,), dtype="float16")
            for i in T.Parallel(2):
                B[i] = V[i]

    return one

# ONE: output B shape=[2] dtype=float16 sum=1.875 abs_sum=1.875
# ONE-NEXT: check: PASS
# SAME: output B {{.*}} dtype=float32 sum=-14.0165 abs_sum=504.252
# SAME-NEXT: check: PASS
# CHECK: check: PASS
# ZERO: output B {{.*}} sum=0 abs_sum=0
# ZERO-NEXT: check: PASS
# TIR: for vw_i0, vw_i1 in T.Parallel(32, 32):
# TIR-NEXT: B[vw_i0, vw_i1] = A_shared[vw_i0 * 32 + vw_i1]
