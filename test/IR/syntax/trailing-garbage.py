# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}trailing-garbage.py:3:7: error: invalid syntax: unexpected '2'
x = 1 2
