# RUN: %tl-opt --emit=ast %s | FileCheck %s
# CHECK: Constant(value=36893488147419103231)
x = 0x1FFFFFFFFFFFFFFFF
