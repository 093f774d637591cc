# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# Operands the elaborated language ops (lib/Frontend/elab_lang_ops.c) refuse, each
# at its location; and what is not supported yet.
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 32), "float16"), I: T.Tensor((1, 8, 8, 4), "float16")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((64, 64), "float16")
        R = T.alloc_shared((32, 64), "float16")
        T.cumsum(A, dim=0)
        T.cumsum(S, dim=2)
        T.transpose(S, R)
        Av = T.view(A, (64, 32), dtype="float32")
        Av[0, 1] = 1.0
        Bw = T.reshape(B, (64, 64))
        Bv = T.reshape(B, (32, 64))
        T.fill(Bv, 0.0)
        T.im2col(A, S, 0, 0, 3, 1, 1, 1)
        x = T.cumsum(S)
        Aw = T.view(A, (64, 64), dtype="float32")
        Ax = T.view(S, (-9223372036854775808,), dtype="float16")
        Ay = T.view(S, (2**62, 4))
        Az = T.view(S, (2**61,))

# CHECK: lang_ops_errors.py:12:18: error: T.cumsum: src 'A' must be a shared or fragment buffer, but it is global
# CHECK: lang_ops_errors.py:13:25: error: T.cumsum: dim 2 is out of range for a 2-dimensional src
# CHECK: lang_ops_errors.py:14:9: error: T.transpose: src of shape (..., M, N) needs a dst of shape (..., N, M) with at least 2 dimensions
# CHECK: lang_ops_errors.py:16:9: error: storing through the view 'A_view' that changes the dtype (float32 of float16) is not supported yet
# CHECK: lang_ops_errors.py:17:27: error: T.reshape: the new shape holds 65536 bits, 'B' 32768
# CHECK: lang_ops_errors.py:19:16: error: T.fill on the view 'B_view' (T.view / T.reshape) is not supported yet (T.copy and element accesses are)
# CHECK: lang_ops_errors.py:20:18: error: T.im2col: img must be a 4-dimensional (N, H, W, C) global tensor, got
# CHECK: lang_ops_errors.py:21:13: error: T.cumsum is a statement and has no value
# CHECK: lang_ops_errors.py:22:24: error: T.view: the new shape holds 131072 bits, 'A' 65536
# Found by test/fuzz/mutate.py (reshape_view.py, a dim 2 -> -2**63): the bit count overflowed int64 (UBSan).
# CHECK: lang_ops_errors.py:23:14: error: dimension 0 of 'S_view' is negative (-9223372036854775808)
# CHECK: lang_ops_errors.py:24:14: error: the shape of 'S_view' has more elements than int64 holds
# CHECK: lang_ops_errors.py:25:24: error: T.view: the new shape's size in bits overflows int64 (2305843009213693952 elements of 16 bits)
