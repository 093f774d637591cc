# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# T.print (issue 30, lib/Frontend/elab_print.c) refused where it has no
# meaning, each at its location: outside a T.Kernel (it prints from the
# device), a buffer region (TileLang prints buffers and scalars only), a
# float8 value (no printf conversion yet), a host value, a msg that is not
# a string, an unknown keyword.
import tilelang.language as T


@T.prim_func
def outside(A: T.Tensor((128,), "float32")):
    T.print(A[0])
    with T.Kernel(1, threads=128) as bx:
        A[0] = 1.0


@T.prim_func
def region(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        T.print(A[0:4])


@T.prim_func
def fp8(A: T.Tensor((128,), "float8_e4m3")):
    with T.Kernel(1, threads=128) as bx:
        T.print(A[0])


@T.prim_func
def host(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        T.print("hello")


@T.prim_func
def bad_msg(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        T.print(A[0], msg=3)


@T.prim_func
def bad_kw(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        T.print(A[0], color="red")

# CHECK: print_errors.py:12:5: error: T.print must be inside a T.Kernel (it prints from the device)
# CHECK: print_errors.py:20:17: error: T.print of a buffer region is not supported (print the buffer, or an element)
# CHECK: print_errors.py:26:17: error: T.print of a float8_e4m3 value is not supported yet
# CHECK: print_errors.py:32:17: error: T.print prints a buffer or a scalar expression, got
# CHECK: print_errors.py:38:27: error: T.print: msg must be a string, got
# CHECK: print_errors.py:44:{{[0-9]+}}: error: {{.*}}color
# CHECK-NOT: error:
