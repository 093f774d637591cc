# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}invalid-character.py:3:7: error: invalid character '$' (U+0024)
x = 1 $ 2
