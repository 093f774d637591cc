# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}star-args.py:4:12: error: star arguments are not supported
import tilelang.language as T
x = T.copy(*args)
