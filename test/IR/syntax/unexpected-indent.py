# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}unexpected-indent.py:4:5: error: unexpected indent
x = 1
    y = 2
