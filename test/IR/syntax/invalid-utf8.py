# Bytes that are not UTF-8 (and NUL) are reported, never a crash.
# RUN: printf 'x = 1\n\377 = 2\n' > %t.utf8.py
# RUN: not %tl-opt %t.utf8.py 2>&1 | FileCheck %s --check-prefix=UTF8 -DFILE=%t.utf8.py
# UTF8: [[FILE]]:2:1: error: invalid character (byte 0xFF is not valid UTF-8)
# RUN: printf 'x = "a\000b"\n' > %t.nul.py
# RUN: not %tl-opt %t.nul.py 2>&1 | FileCheck %s --check-prefix=NUL -DFILE=%t.nul.py
# NUL: [[FILE]]:1:7: error: invalid character (U+0000)
