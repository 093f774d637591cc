# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}unterminated-triple.py:4:5: error: unterminated triple-quoted string literal
def f():
    """docstring
    return 1
