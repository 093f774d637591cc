# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}positional-after-keyword.py:3:12: error: positional argument follows keyword argument
x = f(a=1, 2)
