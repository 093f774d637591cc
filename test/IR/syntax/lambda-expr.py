# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}lambda-expr.py:3:5: error: 'lambda' is not supported in kernel files
f = lambda x: x + 1
