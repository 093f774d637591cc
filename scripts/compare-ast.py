#!/usr/bin/env python3
"""Checks tl-opt's parser against CPython's: for each Python file given,
compares `tl-opt --emit=ast FILE` with ast.dump(ast.parse(FILE)) (CPython
3.11's form; the type_params fields that 3.12 added are dropped) and prints
one line per differing file and a summary "N files, M differ".  Exit status
1 when any file differs or tl-opt fails on a file CPython parses.
    usage: compare-ast.py TL_OPT FILE...
"""
import ast
import subprocess
import sys


def cpython_dump(path):
    with open(path, "rb") as f:
        src = f.read()
    try:
        tree = ast.parse(src, filename=path)
    except SyntaxError:
        return None
    return ast.dump(tree).replace(", type_params=[]", "")


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    tl_opt, files = sys.argv[1], sys.argv[2:]
    differ = skipped = 0
    for path in files:
        want = cpython_dump(path)
        if want is None:
            skipped += 1
            continue
        r = subprocess.run([tl_opt, "--emit=ast", path], capture_output=True, text=True)
        got = r.stdout.strip()
        if r.returncode != 0 or got != want:
            differ += 1
            first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b),
                         min(len(got), len(want)))
            msg = r.stderr.strip().splitlines()[0] if r.returncode else (
                "tl-opt: ..." + got[max(0, first - 60):first + 60] +
                "\n    python: ..." + want[max(0, first - 60):first + 60])
            print(f"DIFFER {path}: {msg}")
    print(f"{len(files) - skipped} files, {differ} differ" +
          (f" ({skipped} not Python 3 per CPython, skipped)" if skipped else ""))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
