# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}unterminated-string.py:4:26: error: unterminated string literal
import tilelang.language as T
x = T.alloc_shared((4,), "float16)
