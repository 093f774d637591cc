# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}missing-colon-for.py:4:22: error: expected ':'
def f(n):
    for i in range(n)
        pass
