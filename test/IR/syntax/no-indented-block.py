# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}no-indented-block.py:4:1: error: expected an indented block after 'def' statement on line 3
def f(a):
return a
