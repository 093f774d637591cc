# RUN: %tl-opt --emit=ast %s | FileCheck %s
# CHECK: Constant(value=9223372036854775808)
x = 9223372036854775808
