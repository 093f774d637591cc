# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}unindent-mismatch.py:5:5: error: unindent does not match any outer indentation level
def f(a):
        x = 1
    return x
