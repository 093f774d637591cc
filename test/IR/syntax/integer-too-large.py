# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}integer-too-large.py:3:5: error: integer literal too large
x = 9223372036854775808
