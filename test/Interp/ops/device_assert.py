# REQUIRES: tl-run
# T.device_assert(cond, msg) (issue 30; TileLang's tilelang/cuda/debug.py,
# docs/language.md "T.device_assert"): the elaborator writes it as
# T.device_assert_at(cond, msg, "file:line").  A passing assert runs (check
# against the reference evaluator); a failing one stops the run with a
# located error naming the message, the block and the thread, on the CPU
# SIMT executor (which first prints the line the GPU prints) and in the
# reference evaluator; on the GPU the failing thread prints that line with
# vprintf, calls __assertfail and traps.  ptxas takes the PTX (label
# ptxas: ptxas/lang_ops).
# RUN: %tl-run --device=cpu --check %s | FileCheck %s
# RUN: not %tl-run --device=cpu --check -D bad=5 %s 2>&1 | FileCheck %s --check-prefix=FAIL
# RUN: not %tl-run --device=cpu --check -D bad=5 -D no_stack=True %s 2>&1 | FileCheck %s --check-prefix=NOSTACK
# RUN: %tl-opt %s | FileCheck %s --check-prefix=TIR
# RUN: %tl-opt %s | %tl-opt - | FileCheck %s --check-prefix=TIR
# RUN: %tl-opt --emit=ptx --target=sm_80 %s | FileCheck %s --check-prefix=PTX
# CHECK: check: PASS
# (stdout and stderr interleave in either order: -DAG)
# FAIL-DAG: device_assert.py:[[#LINE:]]: Device assert failed: index 5 reached BlockIdx=(0, 0, 0), ThreadIdx=(5, 0, 0)
# FAIL-DAG: device_assert.py:[[#LINE]]:17: error: T.device_assert failed: index 5 reached (thread 5) (block (0, 0, 0))
# FAIL-NOT: ThreadIdx=(6
# NOSTACK-DAG: {{^}}Device assert failed: index 5 reached BlockIdx=(0, 0, 0), ThreadIdx=(5, 0, 0)
# NOSTACK-DAG: device_assert.py:{{[0-9]+}}:17: error: T.device_assert failed: index 5 reached
# TIR: T.device_assert_at(bx * 64 + i < 1000, "index 1000 reached", "{{.*}}device_assert.py:[[#]]")
# TIR: T.device_assert_at(n[0] <= T.uint8(2), "More nonzeros than expected in a group", "{{.*}}device_assert.py:[[#]]")
# PTX: .extern .func __assertfail
# PTX: vprintf
# PTX: __assertfail
# PTX: trap;
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def checked(N=128, block=64, bad=1000, no_stack=False):
    @T.prim_func
    def main(A: T.Tensor((N,), "int32"), B: T.Tensor((N,), "int32")):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            n = T.alloc_var(T.uint8)
            for i in T.Parallel(block):
                T.device_assert(bx * block + i < bad, f"index {bad} reached", no_stack_info=no_stack)
                B[bx * block + i] = A[bx * block + i] * 2
            n = 0
            for k in T.unroll(4):
                n = T.if_then_else(k % 2 == 0, n + 1, n)
            T.device_assert(n <= 2, "More nonzeros than expected in a group")

    return main
