# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}unclosed-paren-eof.py:6:18: error: '(' was never closed
import tilelang.language as T

def f(M):
    x = T.ceildiv(M, 128
    return x
