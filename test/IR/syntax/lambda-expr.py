# RUN: %tl-opt --emit=ast %s | FileCheck %s
# CHECK: Lambda(args=arguments(posonlyargs=[], args=[arg(arg='x')]
f = lambda x: x + 1
