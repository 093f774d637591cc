#!/bin/sh
# For each name of the file $2 (one a line), elaborates with tl-opt ($1) a
# kernel that reads T.<name> and prints tl-opt's diagnostics (stdin is named
# <stdin>; the name is on line 6, column 15).  Used by names.test.
tlopt=$1
while read -r name; do
  printf 'import tilelang.language as T\n\n@T.prim_func\ndef main(A: T.Tensor((128,), "float32")):\n    with T.Kernel(1, threads=128) as bx:\n        x = T.%s\n' "$name" |
    "$tlopt" - 2>&1 >/dev/null | grep 'error:'
done < "$2"
exit 0
