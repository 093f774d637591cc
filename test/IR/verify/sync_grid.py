# REQUIRES: tl-run
# T.sync_grid() (issue 30; docs/language.md "Grid barrier"): where it may
# stand and what may cross it (lib/IR/sync_grid.c, the verifier's rule), and
# the split that pass split-kernels makes of it (lib/Lower/split_grid.c).
# RUN: not %tl-opt --kernel=in_serial %s 2>&1 | FileCheck %s --check-prefix=SERIAL
# RUN: not %tl-opt --kernel=in_parallel %s 2>&1 | FileCheck %s --check-prefix=PAR
# RUN: not %tl-opt --kernel=in_if %s 2>&1 | FileCheck %s --check-prefix=IF
# RUN: not %tl-opt --kernel=in_ws %s 2>&1 | FileCheck %s --check-prefix=WS
# RUN: not %tl-opt --kernel=in_pipelined %s 2>&1 | FileCheck %s --check-prefix=PIPE
# RUN: not %tl-opt --kernel=let_read %s 2>&1 | FileCheck %s --check-prefix=LET
# RUN: not %tl-opt --kernel=fragment_read %s 2>&1 | FileCheck %s --check-prefix=FRAG
# RUN: not %tl-opt --kernel=var_read %s 2>&1 | FileCheck %s --check-prefix=VAR
# RUN: not %tl-opt --kernel=part_written %s 2>&1 | FileCheck %s --check-prefix=PART
# RUN: not %tl-opt --kernel=one_branch %s 2>&1 | FileCheck %s --check-prefix=BRANCH
# RUN: not %tl-opt --kernel=other_element %s 2>&1 | FileCheck %s --check-prefix=ELEM
# RUN: not %tl-opt --kernel=second_barrier %s 2>&1 | FileCheck %s --check-prefix=SECOND
# RUN: %tl-opt --emit=simt --kernel=written_forms %s | FileCheck %s --check-prefix=FORMS
# RUN: %tl-opt --emit=simt --kernel=written_forms --print-after-all %s 2>&1 >/dev/null | FileCheck %s --check-prefix=SPLIT
# RUN: %tl-run --device=cpu --check --kernel=written_forms %s | FileCheck %s --check-prefix=EXEC
#
# SERIAL: sync_grid.py:71:17: error: not supported: T.sync_grid inside a T.serial loop (a grid barrier stands at the top level of a T.Kernel body, where the kernel is split into two launches)
# PAR: error: not supported: T.sync_grid inside a T.Parallel loop
# IF: error: not supported: T.sync_grid inside an if
# WS: error: not supported: T.sync_grid inside a T.ws scope
# PIPE: error: not supported: T.sync_grid inside a T.Pipelined loop
# LET: sync_grid.py:133:21: error: 'v' is defined before T.sync_grid() and read after it: the grid barrier splits the kernel into two launches, and only global memory and lets of block and thread indices, parameters and constants cross it
# LET-NEXT: B[bx] = v
# LET: sync_grid.py:132:13: note: the T.sync_grid() is here
# LET: sync_grid.py:131:13: note: 'v' is defined here (its value reads memory)
# FRAG: sync_grid.py:146:20: error: 'acc' (local.fragment) is read after T.sync_grid() before it is written again (a write counts where it covers the whole buffer or the element read): the grid barrier splits the kernel into two launches, and only global memory keeps its contents across it
# FRAG: sync_grid.py:143:13: note: 'acc' is allocated here, before the barrier
# VAR: error: 'total' (local.var) is read after T.sync_grid() before it is written again
# PART: error: 'S' (shared.dyn) is read after T.sync_grid() before it is written again
# BRANCH: error: 'acc' (local.fragment) is read after T.sync_grid() before it is written again
# ELEM: error: 'S' (shared.dyn) is read after T.sync_grid() before it is written again
# SECOND: error: 'acc' (local.fragment) is read after T.sync_grid() before it is written again
# FORMS: def written_forms_k(
# FORMS-NOT: T.sync_grid
# FORMS: def written_forms_k_kernel_1(
# FORMS-NOT: T.sync_grid
# SPLIT: // ----- after parse -----
# SPLIT: T.sync_grid()
# SPLIT: // ----- after split-kernels -----
# SPLIT-NOT: T.sync_grid()
# SPLIT: def written_forms_k(
# SPLIT: def written_forms_k_kernel_1(
# SPLIT: with T.Kernel(4, threads=128) as bx:
# SPLIT-NEXT: F = T.alloc_fragment((32,), "float32")
# SPLIT-NEXT: G = T.alloc_fragment((8, 16), "float32")
# SPLIT-NEXT: S = T.alloc_shared((32,), "float32")
# SPLIT-NEXT: x = T.alloc_var("float32")
# SPLIT-NEXT: base = bx * 32
# SPLIT-NEXT: for i in T.Parallel(32):
# SPLIT-NEXT: F[i] = A[127 - base - i]
# SPLIT: // ----- after check-supported
# EXEC: output B shape=[128] dtype=float32
# EXEC-NEXT: output C shape=[32,16] dtype=float32
# EXEC-NEXT: check: PASS
import tilelang
import tilelang.language as T

N = 128


@tilelang.jit(out_idx=-1)
def in_serial():
    @T.prim_func
    def k(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(4, threads=128) as bx:
            for w in T.serial(2):
                T.sync_grid()
                B[bx * 32 + w] = A[bx * 32 + w]

    return k


@tilelang.jit(out_idx=-1)
def in_parallel():
    @T.prim_func
    def k(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(4, threads=128) as bx:
            for i in T.Parallel(32):
                A[bx * 32 + i] = 1.0
                T.sync_grid()
                B[bx * 32 + i] = A[N - 1 - bx * 32 - i]

    return k


@tilelang.jit(out_idx=-1)
def in_if():
    @T.prim_func
    def k(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(4, threads=128) as bx:
            if bx < 2:
                T.sync_grid()
            B[bx] = A[bx]

    return k


@tilelang.jit(out_idx=-1)
def in_ws():
    @T.prim_func
    def k(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(4, threads=256) as bx:
            with T.ws(0):
                T.sync_grid()
            B[bx] = A[bx]

    return k


@tilelang.jit(out_idx=-1)
def in_pipelined():
    @T.prim_func
    def k(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(4, threads=128) as bx:
            for w in T.Pipelined(2, num_stages=1):
                T.sync_grid()
                B[bx * 32 + w] = A[bx * 32 + w]

    return k


@tilelang.jit(out_idx=-1)
def let_read():
    @T.prim_func
    def k(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(4, threads=128) as bx:
            v = A[bx]
            T.sync_grid()
            B[bx] = v

    return k


@tilelang.jit(out_idx=-1)
def fragment_read():
    @T.prim_func
    def k(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(4, threads=128) as bx:
            acc = T.alloc_fragment((32,), "float32")
            T.copy(A[bx * 32 : bx * 32 + 32], acc)
            T.sync_grid()
            T.copy(acc, B[bx * 32 : bx * 32 + 32])

    return k


@tilelang.jit(out_idx=-1)
def var_read():
    @T.prim_func
    def k(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(4, threads=128) as bx:
            total = T.alloc_var("float32")
            total = A[bx]
            T.sync_grid()
            total += A[bx + 4]
            B[bx] = total

    return k


@tilelang.jit(out_idx=-1)
def part_written():
    @T.prim_func
    def k(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(4, threads=128) as bx:
            S = T.alloc_shared((32,), "float32")
            T.sync_grid()
            T.copy(A[0:16], S[0:16])
            T.copy(A[16:32], S[16:32])
            T.copy(S, B[bx * 32 : bx * 32 + 32])

    return k


@tilelang.jit(out_idx=-1)
def one_branch():
    @T.prim_func
    def k(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(4, threads=128) as bx:
            acc = T.alloc_fragment((32,), "float32")
            T.fill(acc, 1.0)
            T.sync_grid()
            if bx < 2:
                T.fill(acc, 2.0)
            T.copy(acc, B[bx * 32 : bx * 32 + 32])

    return k


@tilelang.jit(out_idx=-1)
def other_element():
    @T.prim_func
    def k(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(4, threads=128) as bx:
            S = T.alloc_shared((32,), "float32")
            T.sync_grid()
            for i in T.serial(31):
                S[i] = A[i]
            for i in T.serial(32):
                B[bx * 32 + i] = S[i]

    return k


@tilelang.jit(out_idx=-1)
def second_barrier():
    @T.prim_func
    def k(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(4, threads=128) as bx:
            acc = T.alloc_fragment((32,), "float32")
            T.sync_grid()
            T.copy(A[bx * 32 : bx * 32 + 32], acc)
            T.sync_grid()
            T.copy(acc, B[bx * 32 : bx * 32 + 32])

    return k


@tilelang.jit(out_idx=[1, 2])
def written_forms():
    """Every form of writing again that the rule accepts: a T.Parallel that
    sweeps a fragment, a nest of loops that sweeps a 2-D one, both branches
    of an if, a store to an alloc_var, an element stored and read in the same
    iteration; a let of the block index crosses."""

    @T.prim_func
    def written_forms_k(
        A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), C: T.Tensor((32, 16), "float32")
    ):
        with T.Kernel(4, threads=128) as bx:
            F = T.alloc_fragment((32,), "float32")
            G = T.alloc_fragment((8, 16), "float32")
            S = T.alloc_shared((32,), "float32")
            x = T.alloc_var("float32")
            base = bx * 32
            T.fill(F, 0.0)
            for i in T.Parallel(32):
                A[base + i] = A[base + i] * 2.0
            T.sync_grid()
            for i in T.Parallel(32):
                F[i] = A[N - 1 - base - i]
            for r in T.serial(8):
                for c in T.Parallel(16):
                    G[r, c] = A[base + r + c]
            if bx < 2:
                x = 1.0
            else:
                x = 2.0
            for i in T.Parallel(32):
                S[i] = F[i] + x
                S[i] = S[i] * 3.0
            for i in T.Parallel(32):
                B[base + i] = S[i]
            T.copy(G, C[bx * 8 : bx * 8 + 8, 0:16])

    return written_forms_k
