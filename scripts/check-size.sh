#!/usr/bin/env bash
# Size check (run by scripts/test.sh, so CI runs it): no file of lib/ or tools/
# over MAX_FILE_LINES lines and no function over MAX_FUNC_LINES lines, except
# those listed below with a reason and the size they have today (they may
# shrink, not grow).  Function extents come from Universal Ctags
# (`--fields=+ne`: start and end line of each function definition; Debian
# package universal-ctags, installed by scripts/install-deps.sh).
# Prints each violation as
#   path:line: function NAME is N lines (limit 150)
#   path:1: file is N lines (limit 1500)
# and exits 1 when there is one; 2 when ctags is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

MAX_FILE_LINES=1500
MAX_FUNC_LINES=150

# path or path:function, the most lines it may have, why it is allowed.
EXCEPTIONS='
tools/tl-run/tl-run.c:main             262  the option switch and the run loop in one function (the option parsers in options.c)
'

if ! command -v ctags >/dev/null || ! ctags --version 2>/dev/null | grep -q 'Universal Ctags'; then
  echo "check-size: Universal Ctags is needed (Debian: apt-get install universal-ctags)" >&2
  exit 2
fi

# limit_of KEY DEFAULT: the listed maximum for KEY, else DEFAULT.
limit_of() {
  local v
  v=$(awk -v k="$1" '$1 == k { print $2; exit }' <<<"$EXCEPTIONS")
  echo "${v:-$2}"
}

fail=0
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- 'lib/*.c' 'lib/*.h' 'lib/*.def' 'tools/*.c' 'tools/*.h' | sort)
else
  mapfile -t files < <(find lib tools -type f \( -name '*.c' -o -name '*.h' -o -name '*.def' \) | sort)
fi
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  n=$(wc -l <"$f")
  lim=$(limit_of "$f" "$MAX_FILE_LINES")
  if [ "$n" -gt "$lim" ]; then
    echo "$f:1: file is $n lines (limit $lim)"
    fail=1
  fi
  [[ "$f" == *.c || "$f" == *.h ]] || continue
  # name <TAB> start <TAB> end, for each function definition
  while IFS=$'\t' read -r name start end; do
    len=$((end - start + 1))
    lim=$(limit_of "$f:$name" "$MAX_FUNC_LINES")
    if [ "$len" -gt "$lim" ]; then
      echo "$f:$start: function $name is $len lines (limit $lim)"
      fail=1
    fi
  done < <(ctags --language-force=C --kinds-C=f --fields=+ne -o - "$f" |
           awk -F'\t' '{ s = ""; e = "";
                         for (i = 4; i <= NF; i++) {
                           if ($i ~ /^line:/) s = substr($i, 6);
                           if ($i ~ /^end:/) e = substr($i, 5);
                         }
                         if (s != "" && e != "") print $1 "\t" s "\t" e }')
done
if [ "$fail" -ne 0 ]; then
  echo "check-size: over the limits (a file of $MAX_FILE_LINES lines, a function of $MAX_FUNC_LINES; exceptions in $0)" >&2
  exit 1
fi
echo "check-size: ${#files[@]} files of lib/ and tools/ within $MAX_FILE_LINES lines, functions within $MAX_FUNC_LINES (listed exceptions aside)"
