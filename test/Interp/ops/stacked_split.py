# REQUIRES: tl-run
# A fragment read along a split dim beside a fragment of its shape with that dim divided (docs/layouts.md
# "Stacked fragments"): TileLang's deepseek_mhc/example_mhc_pre.py (mhc_pre_gemm_sqrsum_tilelang, kept as it
# is) sums the squares of x_frag[i, jj * 4 + j] in a T.Parallel(token_block, 4) under a serial jj beside
# sqrsum_part[i, j], and feeds x_frag to a T.gemm.  x_frag (and the fragment it is copied from) get the STACKED
# layout along dim 1 over sqrsum_part's: element (i, c) on the threads of sqrsum_part[i, c % 4], register
# (c / 4) * nregs + reg.  Checked by the CPU executor against the reference evaluator on sm_80 and sm_90a; a
# split that does not divide the dim (bad=1) stays the located layout conflict.
# RUN: %tl-run --device=cpu --check --dim num_tokens=64,96 %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --target=sm_90a --dim num_tokens=64 %s | FileCheck %s
# RUN: %tl-opt --dump-layouts %s | FileCheck %s --check-prefix=LAYOUT
# RUN: %tl-opt --emit=simt %s | FileCheck %s --check-prefix=SIMT
# RUN: not %tl-opt --emit=simt -D bad=1 %s 2>&1 | FileCheck %s --check-prefix=BAD
# CHECK-NOT: check: FAIL
# CHECK: check: PASS
# LAYOUT: buffer x_frag: local.fragment tfloat32[32, 256]
# LAYOUT-NEXT: layout: STACKED (the layout of its shape with dim 1 divided by 64, repeated along dim 1, 64 times), 256 registers per thread
# LAYOUT-NEXT: rule: the element of index c in dim 1 on the threads of the base's element of index c % 4 there (base below); reg = (c / 4)*4 + its reg
# LAYOUT-NEXT: base: layout: ROWS (32 rows x 4 columns
# SIMT: for jj in T.serial(64):
# SIMT: x_frag[jj * 4 + {{.*}}] * x_frag[jj * 4 + {{.*}}]
# BAD: stacked_split.py:{{[0-9]+}}:{{[0-9]+}}: error: layout conflict for fragment 'x_frag': this T.Parallel loop indexes it differently from the T.copy that distributes it over the threads
import tilelang
import tilelang.language as T


@tilelang.jit
def mhc_pre_gemm_sqrsum_tilelang(
    x,
    fn,
    out,
    sqrsum,
    hc_mult3: int = 24,
    hc_hidden_size: int = 512,
    token_block: int = 32,
    hidden_block: int = 256,
    bad: int = 0,
) -> tilelang.JITKernel:
    num_tokens = T.dynamic("num_tokens")
    w = 3 if bad else 4

    x: T.Tensor((num_tokens, hc_hidden_size), T.bfloat16)
    fn: T.Tensor((hc_mult3, hc_hidden_size), T.tfloat32)
    out: T.Tensor((num_tokens, hc_mult3), T.float32)
    sqrsum: T.Tensor((num_tokens), T.float32)

    with T.Kernel(T.ceildiv(num_tokens, token_block)) as px:
        out_frag = T.alloc_fragment((token_block, 32), T.float32)
        sqrsum_part = T.alloc_fragment((token_block, w), T.float32)
        T.clear(out_frag)
        T.clear(sqrsum_part)
        for pz in T.Pipelined(hc_hidden_size // hidden_block, num_stages=2):
            x_smem_16 = T.alloc_shared((token_block, hidden_block), T.bfloat16)
            fn_smem = T.alloc_shared((32, hidden_block), T.tfloat32)

            T.annotate_layout({x_smem_16: tilelang.layout.make_swizzled_layout(x_smem_16)})

            T.copy(x[px * token_block, pz * hidden_block], x_smem_16)
            T.copy(fn[0, pz * hidden_block], fn_smem)

            x_frag_16 = T.alloc_fragment((token_block, hidden_block), T.bfloat16)
            T.copy(x_smem_16, x_frag_16)
            x_frag = T.alloc_fragment((token_block, hidden_block), T.tfloat32)
            T.copy(x_frag_16, x_frag)

            for jj in T.serial(hidden_block // w):
                for i, j in T.Parallel(token_block, w):
                    sqrsum_part[i, j] += x_frag[i, jj * w + j] * x_frag[i, jj * w + j]

            T.gemm(
                x_frag,
                fn_smem,
                out_frag,
                transpose_A=False,
                transpose_B=True,
                clear_accum=False,
            )
        sqrsum_l = T.alloc_fragment(token_block, T.float32)
        T.reduce_sum(sqrsum_part, sqrsum_l)
        for i in T.Parallel(token_block):
            sqrsum[px * token_block + i] = sqrsum_l[i]
        for i, j in T.Parallel(token_block, 32):
            if j < hc_mult3:
                out[px * token_block + i, j] = out_frag[i, j]
