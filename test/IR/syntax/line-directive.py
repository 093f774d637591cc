# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# RUN: grep -v 'x = 1' %s > %t.py && not %tl-opt %t.py 2>&1 | FileCheck %s --check-prefix=BAD
# A line directive `#@tl-line LINE PATH` (lib/Frontend/lexer.c) in column 1 renames the
# next line; one without a line number and a path is an error at its own line.  Indented,
# it is an ordinary comment.  The error shows the line it names (lib/Support/diag.c).
    #@tl-line 1 ignored.py
#@tl-line 40 other.py
x = 1 $ 2
#@tl-line x.py
# CHECK: other.py:40:7: error: invalid character '$' (U+0024)
# CHECK-NEXT: {{^}}x = 1 $ 2
# CHECK-NEXT: {{^}}      ^
# BAD: other.py:40:1: error: malformed line directive (expected '#@tl-line LINE PATH')
