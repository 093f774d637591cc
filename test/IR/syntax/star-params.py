# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}star-params.py:3:7: error: '*args' parameters are not supported
def f(*args):
    pass
