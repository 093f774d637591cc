#!/usr/bin/env bash
# Format check (run by scripts/test.sh, so CI runs it): every C file git tracks is as clang-format 14 writes it
# with the repository's .clang-format (applied to the whole tree once, 2026-12-06).  Another clang-format
# version formats some constructs differently, so the check insists on 14 (Debian 12: clang-format-14).
# Prints the files that differ and `clang-format-14 -i FILE...` to fix them; exits 1 then, 2 without the tool.
set -euo pipefail
cd "$(dirname "$0")/.."
cf=$(command -v clang-format-14 || true)
if [[ -z $cf ]]; then
  echo "check-format: clang-format-14 is needed (Debian: apt-get install clang-format-14)" >&2
  exit 2
fi
bad=()
while IFS= read -r f; do
  "$cf" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done < <(git ls-files '*.c' '*.h')
if ((${#bad[@]})); then
  printf 'check-format: not formatted: %s\n' "${bad[@]}"
  echo "check-format: fix with: clang-format-14 -i ${bad[*]}"
  exit 1
fi
echo "check-format: $(git ls-files '*.c' '*.h' | wc -l) C files as clang-format 14 writes them"
