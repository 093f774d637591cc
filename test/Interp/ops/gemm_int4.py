# REQUIRES: tl-run
# int4 GEMM (issue 30): the kernel of TileLang's examples/gemm_int4/example_tilelang_gemm_int4.py (A (M, K) and
# B (N, K) T.int4, C int32, T.copy global -> shared of the packed tiles, T.gemm(..., transpose_B=True) on
# mma.sync.m16n8k64 .s4), with the example's tiles at 256x256x512 and with 64x64x64 tiles at 128x128x128,
# and as uint4 (.u4).  The tensors are TileLang's storage: int8 (M, K / 2), two values per byte, the even
# element in the low nibble.  Each run checks the SIMT executor against the reference evaluator; then C is
# checked element by element against the GEMM computed here in Python from the bytes npy_tool wrote (the
# nibbles sign-extended: an independent check of the nibble order and the sign).
# RUN: rm -rf %t && mkdir -p %t
# RUN: %tl-run --device=cpu --check %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D M=128 -D N=128 -D K=128 -D block_M=64 -D block_N=64 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check -D dtype=uint4 -D M=128 -D N=128 -D K=128 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --target=sm_90a --remarks -D M=128 -D N=128 -D K=128 %s 2>&1 | FileCheck %s --check-prefix=HOPPER
# RUN: python3 %S/../../IR/tl-run/Inputs/npy_tool.py write %t/a.npy '|i1' 128,64 '((i * 37 + 11) %% 256) - 128'
# RUN: python3 %S/../../IR/tl-run/Inputs/npy_tool.py write %t/b.npy '|i1' 128,64 '((i * 91 + 5) %% 256) - 128'
# RUN: %tl-run --device=cpu --check -D M=128 -D N=128 -D K=128 --input A=%t/a.npy --input B=%t/b.npy --save %t/o %s | FileCheck %s
# RUN: python3 %S/../../IR/tl-run/Inputs/npy_tool.py check %t/o/C.npy '(lambda nib, a, b, m, n: sum(nib(a(m * 64 + k // 2), k %% 2) * nib(b(n * 64 + k // 2), k %% 2) for k in range(128)))(lambda x, h: ((x %% 256 >> 4 * h) & 15) - 16 * (((x %% 256 >> 4 * h) & 15) >= 8), lambda j: ((j * 37 + 11) %% 256) - 128, lambda j: ((j * 91 + 5) %% 256) - 128, i // 128, i %% 128)' | FileCheck %s --check-prefix=EXACT
# RUN: %tl-opt --emit=simt --print-after=pack-int4 -D M=128 -D N=128 -D K=128 %s 2>&1 >/dev/null | FileCheck %s --check-prefix=PACKED
# RUN: %tl-opt -D M=128 -D N=128 -D K=128 %s | FileCheck %s --check-prefix=TIR
# RUN: %tl-opt --emit=simt -D M=128 -D N=128 -D K=128 %s | FileCheck %s --check-prefix=SIMT
# CHECK: check: PASS
# HOPPER: remark: T.Pipelined loop stays on the cp.async + mma.sync path: its tiles are int4/uint4, which wgmma has no type for on sm_90a
# HOPPER: check: PASS
# EXACT: ok 16384
# TIR: def main(A: T.Tensor((128, 128), "int4"), B: T.Tensor((128, 128), "int4"), C: T.Tensor((128, 128), "int32")):
# TIR: A_shared = T.alloc_shared((128, 64), "int4")
# PACKED: def main(A: T.Tensor((128, 64), "int8"), B: T.Tensor((128, 64), "int8"),
# PACKED: A_shared = T.alloc_shared((128, 32), "int8")
# PACKED: T.copy(A[by * 128:by * 128 + 128, ko * 32:ko * 32 + 32], A_shared)
# PACKED: T.gemm(A_shared{{.*}}, B_shared{{.*}}, C_local, transpose_B=True, packed_int4=True)
# SIMT: T.ptx_mma(A_regs, {{.*}}, "m16n8k64")
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def matmul_nt_int4(M=256, N=256, K=512, block_M=128, block_N=128, block_K=64, dtype="int4", threads=128):
    @T.prim_func
    def main(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((N, K), dtype),
        C: T.Tensor((M, N), T.int32),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_N, block_K), dtype)
            C_local = T.alloc_fragment((block_M, block_N), T.int32)

            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[bx * block_N, ko * block_K], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)

            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
