# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}for-else.py:5:1: error: 'else' after a 'for' loop (for-else) is not supported
for i in range(3):
    pass
else:
    pass
