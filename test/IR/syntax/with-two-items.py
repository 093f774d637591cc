# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}with-two-items.py:3:12: error: several context managers in one 'with' statement are not supported
with a as b, c as d:
    pass
