# RUN: %tl-opt --emit=ast %s | FileCheck %s
# CHECK: Starred(value=Name(id='args', ctx=Load()), ctx=Load())
import tilelang.language as T
x = T.copy(*args)
