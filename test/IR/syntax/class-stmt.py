# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}class-stmt.py:3:1: error: 'class' is not supported in kernel files
class Kernel:
    pass
