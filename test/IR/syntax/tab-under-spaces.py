# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}tab-under-spaces.py:5:2: error: inconsistent use of tabs and spaces in indentation
def f(a):
    if a:
	return 1
    return 0
