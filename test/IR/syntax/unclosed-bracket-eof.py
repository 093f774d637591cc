# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}unclosed-bracket-eof.py:3:5: error: '[' was never closed
x = [1, 2,
     3
