# RUN: not %tl-opt --emit=simt -D kind=fill_nonzero %s 2>&1 | FileCheck %s --check-prefix=FILL
# RUN: not %tl-opt --emit=simt -D kind=wrong_update %s 2>&1 | FileCheck %s --check-prefix=UPDATE
# RUN: not %tl-opt --emit=simt -D kind=not_a_reducer %s 2>&1 | FileCheck %s --check-prefix=NOTRED
# RUN: not %tl-opt --emit=simt -D kind=bad_op %s 2>&1 | FileCheck %s --check-prefix=OP
# RUN: not %tl-opt --emit=simt -D kind=bitand_op %s 2>&1 | FileCheck %s --check-prefix=BITAND
# RUN: not %tl-opt --emit=simt -D kind=bad_replication %s 2>&1 | FileCheck %s --check-prefix=REP
# The forms of T.alloc_reducer / T.finalize_reducer that are refused, each at
# its line (docs/language.md "Reducers").
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=-1)
def reducer_case(kind="fill_nonzero"):
    @T.prim_func
    def main(A: T.Tensor((8, 64), "int32"), B: T.Tensor((8,), "int32")):
        with T.Kernel(1, threads=128) as bx:
            A_local = T.alloc_fragment((8, 64), "int32")
            F = T.alloc_fragment((8,), "int32")
            if kind == "bad_op":
                R = T.alloc_reducer((8,), "int32", op="prod")
            elif kind == "bitand_op":
                R = T.alloc_reducer((8,), "int32", op="bitand")
            elif kind == "bad_replication":
                R = T.alloc_reducer((8,), "int32", replication="some")
            else:
                R = T.alloc_reducer((8,), "int32", op="sum")
            T.copy(A, A_local)
            if kind == "fill_nonzero":
                T.fill(R, 1)
            else:
                T.clear(R)
            for i, j in T.Parallel(8, 64):
                if kind == "wrong_update":
                    R[i] = T.max(R[i], A_local[i, j])
                else:
                    R[i] += A_local[i, j]
            if kind == "not_a_reducer":
                T.finalize_reducer(F)
            T.finalize_reducer(R)
            T.copy(R, B)

    return main

# FILL: reducer_errors.py:30:27: error: T.fill of the sum reducer 'R': the value must be 0 (each replica starts from it); add a constant after T.finalize_reducer instead
# UPDATE: reducer_errors.py:35:21: error: 'R' is a reducer (op="sum"): a T.Parallel may only update it as R[...] += x
# NOTRED: reducer_errors.py:39:36: error: T.finalize_reducer: 'F' is not a buffer of T.alloc_reducer
# OP: reducer_errors.py:21:55: error: T.alloc_reducer: op must be "sum", "max" or "min", got string 'prod'
# BITAND: reducer_errors.py:23:55: error: T.alloc_reducer: op="bitand" is not supported yet (sum, max, min are)
# REP: reducer_errors.py:25:64: error: T.alloc_reducer: replication must be "all", "none" or None, got string 'some'
