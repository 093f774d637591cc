# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}keyword-repeated.py:3:12: error: keyword argument repeated: a
x = f(a=1, a=2)
