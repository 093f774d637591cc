# TVM's thread allreduce (examples/gemv's splitk_gemv_vectorized_tvm):
# `with T.attr(T.comm_reducer(f, [id]), "reduce_scope", ...):
#      T.evaluate(T.tvm_thread_allreduce(T.uint32(1), value, True, dst[0], tk))`
# is the tile op T.thread_allreduce(dst, value, op=, stride=, count=) (the group:
# the threads that differ only in coordinate tk of threads=(x, y)), printed and
# parsed back in that form; lowered to shfl_xor butterflies when a group lies in
# one warp (shfl_sync with the block's lanes under 32 threads), through a
# shared scratch slot per thread otherwise; the forms not supported are errors
# at their line.
# RUN: %tl-opt -D X=8 -D Y=4 %s | FileCheck %s --check-prefix=TIR
# RUN: %tl-opt -D X=8 -D Y=4 %s > %t.py && %tl-opt %t.py | diff - %t.py
# RUN: %tl-opt -D X=8 -D Y=4 -D comb=2 %s | FileCheck %s --check-prefix=TIRMIN
# RUN: %tl-opt --emit=simt -D X=8 -D Y=4 %s | FileCheck %s --check-prefix=SHFL
# RUN: %tl-opt --emit=simt -D X=2 -D Y=4 %s | FileCheck %s --check-prefix=PARTIAL
# RUN: %tl-opt --emit=simt -D X=2 -D Y=32 %s | FileCheck %s --check-prefix=SHARED
# RUN: %tl-opt --emit=ptx --target=sm_80 -D X=8 -D Y=4 %s | FileCheck %s --check-prefix=PTX
# RUN: not %tl-opt -D comb=3 %s 2>&1 | FileCheck %s --check-prefix=COMB
# RUN: not %tl-opt -D bad=scope %s 2>&1 | FileCheck %s --check-prefix=SCOPE
# RUN: not %tl-opt -D bad=count %s 2>&1 | FileCheck %s --check-prefix=COUNT
# RUN: not %tl-opt -D bad=cond %s 2>&1 | FileCheck %s --check-prefix=COND
# RUN: not %tl-opt -D bad=var %s 2>&1 | FileCheck %s --check-prefix=VAR
# RUN: not %tl-opt -D bad=body %s 2>&1 | FileCheck %s --check-prefix=BODY
# RUN: not %tl-opt -D bad=dst %s 2>&1 | FileCheck %s --check-prefix=DST
# RUN: not %tl-opt --emit=simt -D bad=branch %s 2>&1 | FileCheck %s --check-prefix=BRANCH
# TIR: T.thread_allreduce(r, v[0], stride=8, count=4)
# TIRMIN: T.thread_allreduce(r, v[0], op="min", stride=8, count=4)
# SHFL: red_acc[0] = v[0]
# SHFL-NEXT: red_acc[0] = red_acc[0] + T.shfl_xor(red_acc[0], 16, 32)
# SHFL-NEXT: red_acc[0] = red_acc[0] + T.shfl_xor(red_acc[0], 8, 32)
# SHFL-NEXT: r[0] = red_acc[0]
# PARTIAL: T.shfl_sync(T.uint32(255), red_acc[0], T.get_thread_binding(0) ^ 4, 32)
# PARTIAL: T.shfl_sync(T.uint32(255), red_acc[0], T.get_thread_binding(0) ^ 2, 32)
# SHARED: red_ws = T.alloc_shared((64,), "float32")
# SHARED-NEXT: T.sync_threads()
# SHARED-NEXT: red_ws[T.get_thread_binding(0)] = red_acc[0]
# SHARED-NEXT: T.sync_threads()
# SHARED-NEXT: red_acc[0] = red_ws[T.get_thread_binding(0) % 2]
# SHARED-NEXT: for rj in T.serial(31):
# SHARED-NEXT: red_acc[0] = red_acc[0] + red_ws[T.get_thread_binding(0) % 2 + (rj + 1) * 2]
# SHARED-NEXT: T.sync_threads()
# PTX: shfl.sync.bfly.b32
# COMB: thread_allreduce.py:71:{{[0-9]+}}: error: T.comm_reducer: combiners other than lambda x, y: x + y, T.max(x, y) and T.min(x, y) are not supported yet
# SCOPE: thread_allreduce.py:74:{{[0-9]+}}: error: T.attr: only TVM's thread allreduce
# COUNT: thread_allreduce.py:78:{{[0-9]+}}: error: T.tvm_thread_allreduce: 2 values reduced together are not supported yet (1 is)
# COND: thread_allreduce.py:81:{{[0-9]+}}: error: T.tvm_thread_allreduce: a condition other than True is not supported yet
# VAR: thread_allreduce.py:84:{{[0-9]+}}: error: T.tvm_thread_allreduce: the reduced variable must be a thread coordinate
# BODY: thread_allreduce.py:86:{{[0-9]+}}: error: with T.attr(T.comm_reducer(...), "reduce_scope", ...): the body must be one T.evaluate(T.tvm_thread_allreduce(...))
# BRANCH: thread_allreduce.py:93:{{[0-9]+}}: error: T.thread_allreduce inside an if is not lowered yet (every thread of the block must reach it)
# DST: thread_allreduce.py:90:{{[0-9]+}}: error: T.thread_allreduce: the destination 'O' must be a local buffer
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[0])
def allreduce(X=8, Y=4, comb=0, bad=""):
    @T.prim_func
    def allreduce(O: T.Tensor((2, Y, X), "float32")):
        with T.Kernel(2, threads=(X, Y)) as bx:
            tx = T.get_thread_binding(0)
            ty = T.get_thread_binding(1)
            v = T.alloc_local((1,), "float32")
            r = T.alloc_local((1,), "float32")
            v[0] = T.cast(ty + tx, "float32")
            if comb == 0:
                with T.attr(T.comm_reducer(lambda x, y: x + y, [T.cast(0, "float32")]), "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle")):
                    T.evaluate(T.tvm_thread_allreduce(T.uint32(1), v[0], True, r[0], ty, dtype="handle"))
            elif comb == 2:
                with T.attr(T.comm_reducer(lambda x, y: T.min(x, y), [T.cast(0, "float32")]), "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle")):
                    T.evaluate(T.tvm_thread_allreduce(T.uint32(1), v[0], True, r[0], ty, dtype="handle"))
            elif comb == 3:
                with T.attr(T.comm_reducer(lambda x, y: x * y, [T.cast(1, "float32")]), "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle")):
                    T.evaluate(T.tvm_thread_allreduce(T.uint32(1), v[0], True, r[0], ty, dtype="handle"))
            if bad == "scope":
                with T.attr(0, "pragma_unroll", 1):
                    T.evaluate(0)
            if bad == "count":
                with T.attr(T.comm_reducer(lambda x, y: x + y, [0.0]), "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle")):
                    T.evaluate(T.tvm_thread_allreduce(T.uint32(2), v[0], True, r[0], ty, dtype="handle"))
            if bad == "cond":
                with T.attr(T.comm_reducer(lambda x, y: x + y, [0.0]), "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle")):
                    T.evaluate(T.tvm_thread_allreduce(T.uint32(1), v[0], tx < 2, r[0], ty, dtype="handle"))
            if bad == "var":
                with T.attr(T.comm_reducer(lambda x, y: x + y, [0.0]), "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle")):
                    T.evaluate(T.tvm_thread_allreduce(T.uint32(1), v[0], True, r[0], tx + ty, dtype="handle"))
            if bad == "body":
                with T.attr(T.comm_reducer(lambda x, y: x + y, [0.0]), "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle")):
                    r[0] = v[0]
            if bad == "dst":
                with T.attr(T.comm_reducer(lambda x, y: x + y, [0.0]), "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle")):
                    T.evaluate(T.tvm_thread_allreduce(T.uint32(1), v[0], True, O[0, 0, 0], ty, dtype="handle"))
            if bad == "branch":
                if tx < 4:
                    with T.attr(T.comm_reducer(lambda x, y: x + y, [0.0]), "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle")):
                        T.evaluate(T.tvm_thread_allreduce(T.uint32(1), v[0], True, r[0], ty, dtype="handle"))
            O[bx, ty, tx] = r[0]

    return allreduce
