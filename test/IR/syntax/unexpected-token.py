# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}unexpected-token.py:3:9: error: expected ',' or ')', got 'b'
x = f(a b)
