# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}invalid-character-unicode.py:3:7: error: invalid character '€' (U+20AC)
x = 1 € 2
