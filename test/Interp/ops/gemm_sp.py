# REQUIRES: tl-run
# RUN: %tl-opt --emit=tir --kernel=gemm_sp_tile %s | FileCheck %s --check-prefix=TIR
# RUN: %tl-opt --emit=simt --kernel=gemm_sp_tile %s | FileCheck %s --check-prefix=SIMT
# RUN: %tl-opt --emit=ptx --target=sm_80 --kernel=gemm_sp_tile %s | FileCheck %s --check-prefix=PTX
# RUN: %tl-run --device=cpu --check --int-range 0:5 --kernel=gemm_sp_tile %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --int-range 0:5 --kernel=gemm_sp_tile -D e_dtype=int8 -D dtype=bfloat16 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --int-range 0:5 --kernel=gemm_sp_tile -D M=128 -D N=128 -D block_M=128 -D block_N=128 -D threads=256 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --int-range 0:5 --kernel=gemm_sp_tile --target=sm_90a -D K=640 %s | FileCheck %s
# RUN: not %tl-opt --emit=simt --kernel=gemm_sp_tile -D block_K=16 -D K=64 %s 2>&1 | FileCheck %s --check-prefix=K16
# T.gemm_sp (2:4 structured-sparse A, TileLang's examples/gemm_sp): C = dense(A_sparse, E) @ B.  E is built in
# the kernel from Sel (tl-run draws it in [0, 5] with --int-range 0:5): each group of 4 K values takes one of
# the 6 ordered position pairs, nibble = first | second << 2 (lib/Support/mma.h "2:4 structured sparsity").
import tilelang
import tilelang.language as T

# the ordered pairs (0,1) (0,2) (0,3) (1,2) (1,3) (2,3) as nibbles
NIBBLES = (4, 8, 12, 9, 13, 14)


def nibble(s):
    return T.if_then_else(s == 0, 4, T.if_then_else(s == 1, 8, T.if_then_else(s == 2, 12, T.if_then_else(
        s == 3, 9, T.if_then_else(s == 4, 13, 14)))))


@tilelang.jit
def gemm_sp_tile(M=64, N=64, K=128, block_M=64, block_N=64, block_K=64, threads=128, e_dtype="int16",
                 accum_dtype="float32", dtype="float16", num_stages=2):
    e_bits = 16 if e_dtype in ("int16", "uint16") else 8
    per = e_bits // 4  # groups of 4 K values per E element

    @T.prim_func
    def main(A_sparse: T.Tensor((M, K // 2), dtype), Sel: T.Tensor((M, K // 4), "int32"),
             B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), accum_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K // 2), dtype)
            E_shared = T.alloc_shared((block_M, block_K // e_bits), e_dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A_sparse[by * block_M, k * block_K // 2], A_shared)
                for i, j in T.Parallel(block_M, block_K // e_bits):
                    w = T.alloc_var("int32")
                    w = 0
                    for p in T.serial(per):
                        w = w | (nibble(Sel[by * block_M + i, k * block_K // 4 + j * per + p]) << (4 * p))
                    E_shared[i, j] = T.cast(w, e_dtype)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm_sp(A_shared, E_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main

# TIR: T.gemm_sp(A_shared, E_shared, B_shared, C_local)
# SIMT: T.ptx_mma_sp(A_regs, {{.*}}, B_regs, {{.*}}, C_local, {{.*}}, E_regs, {{.*}}, "m16n8k32")
# PTX: .version 8.5
# PTX: mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32
# CHECK: check: PASS
# K16: error: T.gemm_sp: K = 16 is not a multiple of 32
