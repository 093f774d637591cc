# REQUIRES: tl-run
# A 2:4 compressor kernel in the form of TileLang's examples/gemm_sp/sparse_utils.py (issue 30), reduced: each
# thread takes `per_thread` elements of a row (a T.copy whose slice end is written through a let, col0 + ...,
# and its start without it: the extent is a constant only through the let), finds the nonzero positions of
# each group with a T.alloc_var counter reassigned inside T.unroll, checks the count with T.device_assert,
# fixes groups with fewer nonzeros with a tuple swap (pos[0], pos[1] = pos[1], pos[0]: both values read
# before either store), and packs the positions into the metadata words with |= of shifted nibbles.
# python/tests/test_sparse.py runs it on 2:4 sparse inputs against the host compressor
# (tilelang.utils.sparse.compress); here random dense inputs (every element nonzero) make the assert fail,
# located, on the CPU executor, and the kernel lowers to PTX for both targets (ptxas: ptxas/lang_ops).
# TileLang's example keeps `elem` position slots and reads and writes pos[elem] once a group's nonzeros are
# all found (an out-of-bounds access of a local buffer, which the CPU executor reports: OOB below); this
# kernel keeps `group` slots unless slots= says otherwise.
# RUN: not %tl-run --device=cpu --check --dim S=16 %s 2>&1 | FileCheck %s --check-prefix=DENSE
# RUN: not %tl-run --device=cpu --check --dim S=16 -D dtype=float32 %s 2>&1 | FileCheck %s --check-prefix=DENSE
# RUN: not %tl-run --device=cpu --check --dim S=16 -D dtype=int8 -D slots=2 --int-range 0:1 --seed 3 %s 2>&1 | FileCheck %s --check-prefix=OOB
# RUN: %tl-opt %s | FileCheck %s --check-prefix=TIR
# RUN: %tl-opt --emit=ptx --target=sm_90a %s | FileCheck %s --check-prefix=PTX
# DENSE: sparse_compress.py:[[#]]:{{[0-9]+}}: error: T.device_assert failed: a group has too many nonzeros (thread 0) (block (0, 0, 0))
# OOB: sparse_compress.py:[[#]]:{{[0-9]+}}: error: out-of-bounds {{load|store}} of local buffer 'pos': index 2 (size 2)
# TIR: T.copy(dense[by * 16 + r, bk * 256 + c * 32:bk * 256 + c * 32 + 32], vals)
# TIR: tuple_item = pos[0]
# TIR-NEXT: pos[0] = pos[1]
# TIR-NEXT: pos[1] = tuple_item
# PTX: trap;
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-2, -1])
def compress_2to4(D=256, dtype="float16", meta="int16", rows=16, block_K=256, per_thread=32, slots=4):
    kept, group = (1, 2) if dtype == "float32" else (2, 4)
    meta_bits = 8 if meta in ("int8", "uint8") else 32 if meta in ("int32", "uint32") else 16
    e_factor = meta_bits // 4 * group  # dense elements per metadata word
    n_out = per_thread * kept // group
    n_words = per_thread // e_factor
    S = T.dynamic("S")

    @T.prim_func
    def main(dense: T.Tensor((S, D), dtype), packed: T.Tensor((S, D * kept // group), dtype),
             E: T.Tensor((S, D // e_factor), meta)):
        with T.Kernel(S // rows, D // block_K, threads=(rows, block_K // per_thread)) as (by, bk):
            r = T.get_thread_binding(0)
            c = T.get_thread_binding(1)
            vals = T.alloc_local([per_thread], dtype)
            out = T.alloc_local([n_out], dtype)
            word = T.alloc_local([n_words], meta)
            pos = T.alloc_local([slots], T.uint8)
            cnt = T.alloc_var(dtype=T.uint8)
            T.clear(out)
            T.clear(word)
            col0 = bk * block_K
            T.copy(dense[by * rows + r, bk * block_K + c * per_thread:col0 + (c + 1) * per_thread], vals)
            for g in T.unroll(per_thread // group):
                T.clear(pos)
                base = g * group
                cnt = 0
                for i in T.unroll(group):
                    pos[cnt] = T.if_then_else(vals[base + i] != 0, i, pos[cnt])
                    cnt = T.if_then_else(vals[base + i] != 0, cnt + 1, cnt)
                T.device_assert(cnt <= kept, "a group has too many nonzeros")
                shift = 4 * (g % (e_factor // group))
                if kept == 2:
                    if cnt == 1:
                        if pos[0] == 0:
                            pos[1] = 1
                        else:
                            pos[0], pos[1] = pos[1], pos[0]
                    elif cnt == 0:
                        pos[0], pos[1] = 0, 1
                    for i in T.unroll(2):
                        out[g * 2 + i] = vals[base + pos[i]]
                        word[base // e_factor] |= T.shift_left(pos[i].astype(meta), shift + 2 * i)
                else:
                    if cnt == 0:
                        out[g] = 0
                        word[base // e_factor] |= T.shift_left(0b0100, shift)
                    else:
                        out[g] = vals[base + pos[0]]
                        word[base // e_factor] |= T.shift_left(T.if_then_else(pos[0] == 0, 0b0100, 0b1110), shift)
            out0 = col0 * kept // group
            w0 = col0 // e_factor
            T.copy(out, packed[by * rows + r, out0 + c * n_out:out0 + (c + 1) * n_out])
            T.copy(word, E[by * rows + r, w0 + c * n_words:w0 + (c + 1) * n_words])

    return main
