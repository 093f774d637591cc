# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}integer-too-large-hex.py:3:5: error: integer literal too large
x = 0x1FFFFFFFFFFFFFFFF
