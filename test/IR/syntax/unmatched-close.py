# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}unmatched-close.py:3:6: error: unmatched ')'
x = 1)
