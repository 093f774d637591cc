# REQUIRES: tl-run
# T.copy(..., annotations={...}) (issue 30; TileLang's tilelang/language/copy_op.py): the dict's values take
# precedence over the keywords of the same name.  coalesced_width and disable_tma become those attributes;
# prefer_instruction "sync" means disable_tma (a synchronous copy), "tma" and "cp_async" are preferences the
# lowering makes on its own; eviction_policy (0-2 or "evict_normal/first/last") is a cache hint, accepted and not
# emitted; another key (sm_100's T.WSID) is a located error.  Each copy runs on the CPU executor against the
# reference evaluator (and on the GPU in test_lang_ops).
# RUN: %tl-opt %s | FileCheck %s --check-prefix=ATTRS
# RUN: %tl-opt -D form=1 %s | FileCheck %s --check-prefix=SYNC
# RUN: %tl-opt -D form=3 %s | FileCheck %s --check-prefix=WINS
# RUN: %tl-run --device=cpu --check %s | FileCheck %s --check-prefix=CHECK
# RUN: %tl-run --device=cpu --check --target=sm_90a -D form=1 %s | FileCheck %s --check-prefix=CHECK
# RUN: not %tl-opt -D form=2 %s 2>&1 | FileCheck %s --check-prefix=KEY
# RUN: not %tl-opt -D form=4 %s 2>&1 | FileCheck %s --check-prefix=EVICT
# RUN: not %tl-opt -D form=5 %s 2>&1 | FileCheck %s --check-prefix=INSTR
# RUN: not %tl-opt -D form=6 %s 2>&1 | FileCheck %s --check-prefix=DICT
# ATTRS: T.copy(A[by * 64:by * 64 + 64, bx * 64:bx * 64 + 64], s, coalesced_width=4, disable_tma=True)
# SYNC: T.copy(A[by * 64:by * 64 + 64, bx * 64:bx * 64 + 64], s, disable_tma=True)
# WINS: T.copy(A[by * 64:by * 64 + 64, bx * 64:bx * 64 + 64], s, coalesced_width=4)
# CHECK: check: PASS
# KEY: copy_annotations.py:[[#@LINE+20]]:67: error: T.copy: the annotation string 'ws_id' is not supported (known: coalesced_width, disable_tma, prefer_instruction, eviction_policy)
# EVICT: copy_annotations.py:[[#@LINE+23]]:86: error: T.copy: eviction_policy must be 0, 1, 2 or "evict_normal", "evict_first", "evict_last", got int 7
# INSTR: copy_annotations.py:[[#@LINE+24]]:89: error: T.copy: prefer_instruction must be "tma", "cp_async" or "sync", got string 'ldg'
# DICT: copy_annotations.py:[[#@LINE+25]]:66: error: T.copy: annotations must be a dict, got a list
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def copy_ann(N=256, block=64, form=0):
    @T.prim_func
    def main(A: T.Tensor((N, N), "float16"), B: T.Tensor((N, N), "float16")):
        with T.Kernel(N // block, N // block, threads=128) as (bx, by):
            s = T.alloc_shared((block, block), "float16")
            if form == 0:
                T.copy(A[by * block, bx * block], s, annotations={"disable_tma": True, "coalesced_width": 4})
            elif form == 1:
                T.copy(A[by * block, bx * block], s, disable_tma=False,
                       annotations={"prefer_instruction": "sync", "eviction_policy": "evict_last"})
            elif form == 2:
                T.copy(A[by * block, bx * block], s, annotations={"ws_id": "copy_q"})
            elif form == 3:
                T.copy(A[by * block, bx * block], s, annotations={"coalesced_width": 4}, coalesced_width=8)
            elif form == 4:
                T.copy(A[by * block, bx * block], s, annotations={"eviction_policy": 7, "prefer_instruction": "tma"})
            elif form == 5:
                T.copy(A[by * block, bx * block], s, annotations={"prefer_instruction": "ldg"})
            else:
                T.copy(A[by * block, bx * block], s, annotations=[("disable_tma", True)])
            T.copy(s, B[by * block, bx * block])

    return main
