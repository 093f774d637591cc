# REQUIRES: tl-run
# T.make_tensor(ptr, shape, dtype) (TileLang's language/proxy.py): tensors over device addresses held in
# pointer tables (T.Tensor((G,), T.ptr), int64 data_ptr()s), a small faithful reduction of TileLang's
# examples/grouped_gemm/example_grouped_gemm_fwd_ptr.py: each block finds its group, makes A, B and C over
# the group's pointers and runs a T.copy (cp.async) + T.gemm loop.  On the CPU the tables point into the
# slices of A_all, B_all and C_all (tl-run --ptr-table); an address outside the launch's tensors, or a view
# reaching past its tensor, is a located error of both CPU models.
# RUN: %tl-run --device=cpu --check --out-idx=none --ptr-table A_ptrs=A_all --ptr-table B_ptrs=B_all --ptr-table C_ptrs=C_all %s | FileCheck %s
# RUN: %tl-run --device=cpu --check --target=sm_90a --out-idx=none --ptr-table A_ptrs=A_all --ptr-table B_ptrs=B_all --ptr-table C_ptrs=C_all %s | FileCheck %s
# RUN: %tl-opt %s | FileCheck %s --check-prefix=TIR
# RUN: %tl-opt %s | %tl-opt - | FileCheck %s --check-prefix=TIR
# RUN: %tl-opt --emit=ptx --target=sm_90a -D ws=1 --remarks %s 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
# RUN: not %tl-run --device=cpu --out-idx=none --int-range 0:0 %s 2>&1 | FileCheck %s --check-prefix=NOWHERE
# RUN: not %tl-run --device=cpu --check --out-idx=none -D bad=1 --ptr-table A_ptrs=A_all --ptr-table B_ptrs=B_all --ptr-table C_ptrs=C_all %s 2>&1 | FileCheck %s --check-prefix=PAST
# RUN: not %tl-opt -D bad=2 %s 2>&1 | FileCheck %s --check-prefix=BAD2
# CHECK: check: PASS
# TIR: A = T.make_tensor(A_ptrs[cur_batch_idx[0]], (64, 64), "float16")
# TIR: C = T.make_tensor(C_ptrs[cur_batch_idx[0]], (64, 64), "float16")
# REMARK: make_tensor.py:{{[0-9]+}}:{{[0-9]+}}: remark: T.Pipelined loop stays on the cp.async + mma.sync path: a copy's source is a T.make_tensor view, whose address is known only on the device (no TMA descriptor can be made on the host)
# NOWHERE: make_tensor.py:{{[0-9]+}}:{{[0-9]+}}: error: {{.*}}T.make_tensor 'A': address 0x0 {{.*}}points into no tensor argument of this launch
# PAST: make_tensor.py:{{[0-9]+}}:{{[0-9]+}}: error: {{.*}}T.make_tensor 'C': its 4160 elements from address 0x{{[0-9a-f]+}} reach past the end of 'C_all'
# BAD2: make_tensor.py:{{[0-9]+}}:{{[0-9]+}}: error: T.make_tensor: the address must be a scalar int64 (an element of a T.Tensor of T.ptr), got int32
import math

import tilelang
import tilelang.language as T


@tilelang.jit
def grouped_gemm_ptr(s0=16, s1=33, s2=64, K=64, N=64, block_M=32, block_N=32, block_K=32, ws=0, bad=0):
    G = 3
    max_M = max(s0, s1, s2)
    o1 = math.ceil(s0 / block_M)  # the first m-block of groups 1 and 2 (the example's batch_tile_offsets)
    o2 = o1 + math.ceil(s1 / block_M)
    m_blocks = o2 + math.ceil(s2 / block_M)
    dtype = T.float16

    @T.prim_func
    def kernel(
        A_all: T.Tensor((G, max_M, K), dtype),
        B_all: T.Tensor((G, K, N), dtype),
        C_all: T.Tensor((G, max_M, N), dtype),
        A_ptrs: T.Tensor([G], T.ptr),
        B_ptrs: T.Tensor([G], T.ptr),
        C_ptrs: T.Tensor([G], T.ptr),
    ):
        with T.Kernel(m_blocks, T.ceildiv(N, block_N), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            cur_batch_idx = T.alloc_var(dtype=T.int32)
            cur_tile_offset = T.alloc_var(dtype=T.int32)
            cur_batch_idx = T.if_then_else(bx >= o1, 1, 0)
            cur_tile_offset = T.if_then_else(bx >= o1, o1, 0)
            cur_batch_idx = T.if_then_else(bx >= o2, 2, cur_batch_idx)
            cur_tile_offset = T.if_then_else(bx >= o2, o2, cur_tile_offset)
            m_start = (bx - cur_tile_offset) * block_M
            if bad == 2:
                A = T.make_tensor(cur_batch_idx, (max_M, K), dtype)
            else:
                A = T.make_tensor(A_ptrs[cur_batch_idx], (max_M, K), dtype)
            B = T.make_tensor(B_ptrs[cur_batch_idx], (K, N), dtype)
            C = T.make_tensor(C_ptrs[cur_batch_idx], (max_M + bad, N), dtype)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=1 + ws):
                T.copy(A[m_start, ko * block_K], A_shared)
                T.copy(B[ko * block_K, by * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[m_start, by * block_N])

    return kernel
