# RUN: %tl-opt --emit=ast %s | FileCheck %s
# CHECK: vararg=arg(arg='args')
def f(*args):
    pass
