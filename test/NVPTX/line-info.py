# Line information (issue 32; lib/NVPTX/codegen_debug.c, docs/codegen.md
# "Line information"): by default every statement's file:line:col is an LLVM
# debug location and the PTX carries `.loc 1 LINE COL` before the
# instructions of that line and `.file 1 "<the path as given>"`, with no DWARF
# sections and no `, debug` on .target; the lowering keeps the locations of
# the tile statements down to the SIMT IR (the T.copy loads, the T.Parallel
# store, the loop's line on its latch).  --no-line-info and -g0 drop them;
# -g and -g1 keep them; -gfoo is a usage error.  ptxas accepts both at sm_80
# and sm_90a (and the examples' PTX, with line information, in the ptxas
# label).  Inline PTX (asm) gets its line too: the wgmma fence and
# mma_async of the sm_90a GEMM (kernel gemm) carry the T.gemm's line.
# RUN: %tl-opt --emit=ptx --kernel=add_one %s -o %t.ptx
# RUN: FileCheck %s < %t.ptx
# RUN: FileCheck --check-prefix=FILE %s < %t.ptx
# RUN: %tl-opt --emit=ptx --target=sm_90a --kernel=add_one %s | FileCheck %s
# RUN: %tl-opt --emit=ptx -g --kernel=add_one %s | FileCheck %s
# RUN: %tl-opt --emit=ptx -g1 --kernel=add_one %s | FileCheck %s
# RUN: %tl-opt --emit=ptx --no-line-info --kernel=add_one %s -o %t0.ptx
# RUN: FileCheck --check-prefix=NONE %s < %t0.ptx
# RUN: %tl-opt --emit=ptx -g0 --kernel=add_one %s | FileCheck --check-prefix=NONE %s
# RUN: not %tl-opt --emit=ptx -gfoo --kernel=add_one %s 2>&1 | FileCheck --check-prefix=BADG %s
# RUN: %ptxas -arch=sm_80 %t.ptx -o %t.cubin
# RUN: %ptxas -arch=sm_90a %t.ptx -o %t.cubin
# RUN: %ptxas -arch=sm_80 %t0.ptx -o %t0.cubin
# RUN: %tl-opt --emit=ptx --target=sm_90a --kernel=gemm %s | FileCheck --check-prefix=ASM %s
# RUN: %tl-opt --emit=llvm --kernel=add_one %s | FileCheck --check-prefix=IR %s
import tilelang
import tilelang.language as T

# CHECK-NOT:   .target sm_{{[0-9]+a?}}, debug
# CHECK:       .entry main(
@tilelang.jit(out_idx=-1)
def add_one(N=1024, block=256):
# The kernel's first line is the function's (the prim_func's def), then the T.Kernel's:
    @T.prim_func
# CHECK:       .loc 1 [[@LINE+1]] 0
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
# CHECK:       .loc 1 [[@LINE+1]] 9
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            tile = T.alloc_fragment((block,), "float32")
# The copy's loads carry its line:
# CHECK:       .loc 1 [[@LINE+3]] 13
# CHECK-NOT:   .loc
# CHECK:       ld.global
            T.copy(A[bx * block], tile)
# CHECK:       .loc 1 [[@LINE+3]] 17
# CHECK-NEXT:  add.rn.f32
            for i in T.Parallel(block):
                tile[i] = tile[i] + 1.0
# CHECK:       .loc 1 [[@LINE+3]] 13
# CHECK-NOT:   .loc
# CHECK:       st.global
            T.copy(tile, B[bx * block])

    return main
# CHECK:       ret;
# CHECK-NOT:   .section .debug_info
# CHECK-NOT:   .section .debug_abbrev

# FILE:        .file 1 "{{.*}}test/NVPTX/line-info.py"

# NONE-NOT:    .loc
# NONE-NOT:    .file
# NONE:        ret;

# BADG: tl-opt: error: unknown option '-gfoo' (expected -g0, -g, -g1 or -gline-tables-only)

# IR: !DICompileUnit(language: DW_LANG_Python, file: ![[F:[0-9]+]], producer: "tilelang-ptx", isOptimized: true, runtimeVersion: 0, emissionKind: DebugDirectivesOnly
# IR: ![[F]] = !DIFile(filename: "{{.*}}test/NVPTX/line-info.py", directory: "")
# IR: !DISubprogram(name: "main"

# Inline PTX (asm): the wgmma statements T.gemm lowers to carry its line.
@tilelang.jit(out_idx=-1)
def gemm(M=256, N=256, K=256, block_M=128, block_N=128, block_K=64):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), "float16")
            B_shared = T.alloc_shared((block_K, block_N), "float16")
            C_local = T.alloc_fragment((block_M, block_N), "float")
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[ko * block_K, bx * block_N], B_shared)
# ASM:       .loc 1 [[@LINE+4]] 17
# ASM-NEXT:  // begin inline asm
# ASM-NEXT:  wgmma.fence.sync.aligned;
# ASM:       wgmma.mma_async.sync.aligned
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
