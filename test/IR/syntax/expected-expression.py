# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}expected-expression.py:3:10: error: expected expression, got ')'
x = (1 + )
