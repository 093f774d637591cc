# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}assign-to-call.py:3:1: error: cannot assign to function call
f() = 3
