# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}mixed-tabs-spaces.py:5:2: error: inconsistent use of tabs and spaces in indentation
def f(a):
    x = 1
	y = 2
