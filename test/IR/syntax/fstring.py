# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# CHECK: {{.*}}fstring.py:4:7: error: f-strings are not supported
name = "x"
msg = f"hello {name}"
