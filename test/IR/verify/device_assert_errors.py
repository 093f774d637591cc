# RUN: not %tl-opt --kernel=raw %s 2>&1 | FileCheck %s --check-prefix=VERIFY
# RUN: not %tl-opt --kernel=main %s 2>&1 | FileCheck %s
# RUN: not %tl-opt --kernel=outside %s 2>&1 | FileCheck %s --check-prefix=OUTSIDE
# T.device_assert_at (what T.device_assert elaborates to, docs/language.md
# "T.device_assert"): the verifier wants a scalar bool condition and string
# literals for the message and the location; T.device_assert itself refuses
# what it cannot lower, each at its location.
import tilelang.language as T


@T.prim_func
def raw(A: T.Tensor((8,), "int32")):
    with T.Kernel(1, threads=32) as bx:
        T.device_assert_at(A[0], "m", "f.py:1")
        T.device_assert_at(A[0] > 0, A[1], "f.py:1")
        T.device_assert_at(A[0] > 0, "m", 3)

# VERIFY-DAG: device_assert_errors.py:14:9: error: T.device_assert_at: the condition must be a scalar bool, got int32
# VERIFY-DAG: device_assert_errors.py:15:9: error: T.device_assert_at: the message must be a string literal
# VERIFY-DAG: device_assert_errors.py:16:9: error: T.device_assert_at: the location must be a string literal


@T.prim_func
def main(A: T.Tensor((8,), "int32")):
    with T.Kernel(1, threads=32) as bx:
        T.device_assert(A[0] > 0, msg=7)
        T.device_assert(A[0:2], "region")
        T.device_assert(A[0] > 0, "x", no_stack_info=A[1] > 0)

# CHECK-DAG: device_assert_errors.py:26:39: error: T.device_assert: msg must be a string, got int 7
# CHECK-DAG: device_assert_errors.py:27:27: error: a slice of buffer 'A' cannot be used as a scalar value
# CHECK-DAG: device_assert_errors.py:28:54: error: T.device_assert: no_stack_info must be a compile-time bool


@T.prim_func
def outside(A: T.Tensor((8,), "int32")):
    T.device_assert(A[0] > 0, "host")
    with T.Kernel(1, threads=32) as bx:
        A[0] = 1

# OUTSIDE: device_assert_errors.py:37:5: error: T.device_assert must be inside a T.Kernel (it checks on the device)
