#!/usr/bin/env bash
# Tries tl-opt on TileLang's own files as a new user would: every
# examples/**/example_*.py and every testing/python/{language,kernel,jit}/
# **/test_*.py of a tile-ai/tilelang checkout, given unchanged to
# `tl-opt --emit=tir` (no -D, no --kernel), and tabulates the first error of
# each file, grouped by its message (quoted names and numbers masked), with
# the count of example and test files per group.
#   usage: scripts/try-tilelang.sh CHECKOUT [TL_OPT] [OUT_TSV]
# CHECKOUT is a directory holding TileLang's examples/ and testing/ (for
# instance `git archive` of a commit, outside this repository); TL_OPT
# defaults to build/tl-opt; OUT_TSV (optional) receives one line per file:
# kind, path, first error ("OK" when it compiled).
set -euo pipefail
src=${1:?usage: try-tilelang.sh CHECKOUT [TL_OPT] [OUT_TSV]}
root=$(cd "$(dirname "$0")/.." && pwd)
tlopt=${2:-$root/build/tl-opt}
out=${3:-$(mktemp)}
[ -x "$tlopt" ] || { echo "try-tilelang: no tl-opt at $tlopt" >&2; exit 2; }
[ -d "$src/examples" ] || { echo "try-tilelang: $src has no examples/" >&2; exit 2; }

: >"$out"
try() {  # kind path
  local msg rc=0
  msg=$(timeout 60 "$tlopt" --emit=tir "$2" 2>&1 >/dev/null) || rc=$?
  if [ "$rc" -eq 0 ]; then msg=OK
  elif [ "$rc" -ge 124 ]; then msg="timeout or crash (exit $rc)"
  else msg=$(printf '%s\n' "$msg" | grep -m1 'error:' | sed 's/^.*error: //' || true)
       [ -n "$msg" ] || msg="failed without a message (exit $rc)"
  fi
  printf '%s\t%s\t%s\n' "$1" "${2#"$src"/}" "$msg" >>"$out"
}
while IFS= read -r -d '' f; do try example "$f"; done \
  < <(find "$src/examples" -name 'example_*.py' -print0 | sort -z)
for d in language kernel jit; do
  [ -d "$src/testing/python/$d" ] || continue
  while IFS= read -r -d '' f; do try test "$f"; done \
    < <(find "$src/testing/python/$d" -name 'test_*.py' -print0 | sort -z)
done

python3 - "$out" <<'PY'
import collections, re, sys
rows = [l.rstrip("\n").split("\t", 2) for l in open(sys.argv[1]) if l.strip()]
groups = collections.OrderedDict()
for kind, path, msg in rows:
    key = re.sub(r"'[^']*'", "'…'", msg)
    key = re.sub(r"\b\d+\b", "N", key)
    key = re.sub(r"-D \w+=<\w+>", "-D NAME=…", key)
    key = re.sub(r"call \w+\.compile\([^)]*\)", "call KERNEL.compile(...)", key)
    g = groups.setdefault(key, {"example": 0, "test": 0, "first": path})
    g[kind] += 1
tot = collections.Counter(k for k, _, _ in rows)
print("| first error | examples | tests | e.g. |")
print("|---|---|---|---|")
for key, g in sorted(groups.items(), key=lambda kv: -(kv[1]["example"] + kv[1]["test"])):
    shown = "compiles" if key == "OK" else "`" + key.replace("|", "\\|")[:150] + "`"
    print(f"| {shown} | {g['example'] or '—'} | {g['test'] or '—'} | {g['first']} |")
print(f"| total | {tot['example']} | {tot['test']} | |")

def cause(msg):
    if msg == "OK": return "compiles"
    if re.search(r"has no value|lack parameter values", msg): return "needs -D values (or --kernel)"
    if re.search(r"(syntax|comprehension|f-string|lambda|star |yield|await|'class'|'try'|"
                 r"'assert'|'with'|walrus|:=|not supported|set literals|integer literal too large|"
                 r"factory body|compile-time|cannot unpack|host value|host function|immutable)", msg):
        return "unsupported Python"
    if re.search(r"(unknown name 'T\.|unknown keyword|takes \d+ (positional )?arguments?|"
                 r"unsupported loop iterator|statement; expected T\.Kernel|unknown dtype|"
                 r"pass config|function attribute)", msg):
        return "unsupported TileLang op or option"
    return "other"
by = collections.OrderedDict()
for kind, path, msg in rows:
    c = by.setdefault(cause(msg), {"example": 0, "test": 0})
    c[kind] += 1
print()
print("| cause | examples | tests |")
print("|---|---|---|")
for c, g in sorted(by.items(), key=lambda kv: -(kv[1]["example"] + kv[1]["test"])):
    print(f"| {c} | {g['example'] or '—'} | {g['test'] or '—'} |")
PY
