# RUN: %tl-opt %s | FileCheck %s
# RUN: %tl-opt %s | %tl-opt - | FileCheck %s
# RUN: %tl-opt --kernel=let_extent %s | FileCheck %s --check-prefix=EXTENT
# Python evaluates every value of a tuple assignment before the first target (issue 30, TileLang's
# test_swap_logic and examples/gemm_sp/sparse_utils.py): an item that reads a buffer an earlier target stores
# into is bound to a let `tuple_item` first (the swap of two buffer elements, of two T.alloc_var names); items
# with no such read are assigned as they are. A slice whose end is written through a pure let
# (k = bx * 64) has the constant extent the let's value gives.
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((4,), "float32"), B: T.Tensor((4,), "float32")):
    with T.Kernel(1, threads=1) as bx:
        a = T.alloc_var(T.float32, A[0])
        b = T.alloc_var(T.float32, A[1])
        a, b = b, a
        A[0], A[1] = A[1], A[0]
        A[2], B[2] = B[3], A[3]
        A[3], B[3] = a, b

# CHECK:      tuple_item = a[0]
# CHECK-NEXT: a[0] = b[0]
# CHECK-NEXT: b[0] = tuple_item
# CHECK-NEXT: tuple_item_1 = A[0]
# CHECK-NEXT: A[0] = A[1]
# CHECK-NEXT: A[1] = tuple_item_1
# CHECK-NEXT: tuple_item_2 = A[3]
# CHECK-NEXT: A[2] = B[3]
# CHECK-NEXT: B[2] = tuple_item_2
# CHECK-NEXT: A[3] = a[0]
# CHECK-NEXT: B[3] = b[0]


@T.prim_func
def let_extent(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), "float32")):
    with T.Kernel(4, threads=2) as bx:
        t = T.get_thread_binding(0)
        L = T.alloc_local((32,), "float32")
        k = bx * 64
        T.copy(A[bx * 64 + t * 32:k + (t + 1) * 32], L)
        T.copy(L, B[k + t * 32:k + t * 32 + 32])

# EXTENT: T.copy(A[bx * 64 + t * 32:bx * 64 + t * 32 + 32], L)
