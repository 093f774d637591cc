# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}mismatched-bracket.py:3:13: error: closing parenthesis ']' does not match opening parenthesis '('
x = foo(1, 2]
