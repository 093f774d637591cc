# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}backslash-junk.py:3:7: error: unexpected character after line continuation character
x = 1 \ 2
