#!/usr/bin/env bash
# PTX validation (docs/codegen.md "Targets and PTX versions"): every example kernel that
# lowers today is compiled with tl-opt for sm_80 and sm_90a; the sm_80 PTX must
# pass `ptxas -arch=sm_80` and `-arch=sm_90a`, the sm_90a PTX `-arch=sm_90a`.
# A missing ptxas is a failure, not a skip.  Examples whose lowering is not
# written yet ("is not lowered yet") are listed and skipped; any other
# compile failure fails the test.  A kernel that uses sm_90 instructions
# (docs/simt-ir.md "Asynchronous pipelines") is refused for sm_80
# with "needs sm_90 or later (target sm_80)" or "needs PTX ISA x.y or later
# (target sm_80 ...)", or whose shared memory exceeds what an sm_80 block may
# use (a Hopper-sized tile): that target is listed and skipped, its sm_90a PTX checked.
# An argument FILE@TARGET compiles FILE for TARGET only and checks that PTX on
# -arch=TARGET (targets the directories do not cover: sm_86, sm_89, sm_90);
# FILE@TARGET@N=V,N=V,... also binds factory parameters (tl-opt -D N=V).
# Usage: ptxas_examples.sh TL_OPT (DIR | FILE@TARGET[@DEFINES])...  (every *.py in each DIR)
set -uo pipefail
tlopt=$1
shift
ptxas=${TL_PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
if [[ ! -x "$ptxas" ]]; then
  echo "FAIL: ptxas not found (install the CUDA toolkit or set TL_PTXAS)" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
checked=0 skipped=0 failed=0
# one line per file: the file, then the targets (sm_80 PTX also goes through -arch=sm_90a)
jobs=$(for a in "$@"; do
  if [[ "$a" == *@*@* ]]; then r=${a#*@}; echo "${a%%@*} ${r%%@*} ${r#*@}"
  elif [[ "$a" == *@* ]]; then echo "${a%@*} ${a##*@}"; else for f in "$a"/*.py; do echo "$f sm_80 sm_90a"; done; fi
done)
while read -r f targets; do
  defs=() name=$(basename "$f" .py)
  if [[ "$targets" == *" "*=* ]]; then  # FILE TARGET DEFINES
    IFS=, read -ra kv <<<"${targets#* }"; targets=${targets%% *}
    for d in "${kv[@]}"; do defs+=(-D "$d"); done
    name="$name.${targets}.$(IFS=.; echo "${kv[*]}")"
  fi
  if ! "$tlopt" --emit=simt "${defs[@]}" "$f" >/dev/null 2>"$tmp/err" &&
     ! { grep -Eq "needs sm_89 or newer|bytes a block may use on sm_80" "$tmp/err" &&   # fp8 mma, or a Hopper-sized tile: check the SIMT IR on the last target listed
         "$tlopt" --emit=simt --target="${targets##* }" "${defs[@]}" "$f" >/dev/null 2>"$tmp/err"; }; then
    if grep -q "is not lowered yet" "$tmp/err"; then
      echo "skip  $name (not lowered yet: $(grep -m1 -o 'T\.[a-z_]* [a-z ]*is not lowered yet' "$tmp/err"))"
      skipped=$((skipped + 1)); continue
    fi
    echo "FAIL  $name: tl-opt --emit=simt failed:"; cat "$tmp/err"; failed=$((failed + 1)); continue
  fi
  for target in $targets; do
    if ! "$tlopt" --emit=ptx --target=$target "${defs[@]}" "$f" -o "$tmp/$name.$target.ptx" 2>"$tmp/err"; then
      if [[ $target == sm_80 ]] && grep -Eq "error: T\.[a-z_]+ needs (sm_90 or later|sm_90a|PTX ISA [0-9.]+ or later) \(target sm_80" "$tmp/err"; then
        echo "skip  $name --target=sm_80 ($(grep -m1 -Eo 'T\.[a-z_]+ needs (sm_90 or later|sm_90a|PTX ISA [0-9.]+ or later)' "$tmp/err"))"; continue
      fi
      if [[ $target == sm_80 ]] && grep -Eq "error: (fp8 mma|conversion from [a-z0-9_]+ to [a-z0-9_]+) needs sm_89 or newer" "$tmp/err"; then
        echo "skip  $name --target=sm_80 (float8 needs sm_89 or newer)"; continue
      fi
      if [[ $target == sm_80 ]] && grep -Eq "error: shared memory of [0-9]+ bytes exceeds the [0-9]+ bytes a block may use on sm_80" "$tmp/err"; then
        echo "skip  $name --target=sm_80 ($(grep -m1 -Eo 'shared memory of [0-9]+ bytes exceeds the [0-9]+ bytes a block may use on sm_80' "$tmp/err"))"; continue
      fi
      echo "FAIL  $name ($target): tl-opt --emit=ptx failed:"; cat "$tmp/err"; failed=$((failed + 1)); continue
    fi
    archs=$target; [[ $target == sm_80 ]] && archs="sm_80 sm_90a"
    for arch in $archs; do
      if "$ptxas" -arch=$arch "$tmp/$name.$target.ptx" -o "$tmp/out.cubin" 2>"$tmp/perr"; then
        echo "ok    $name --target=$target ptxas -arch=$arch"; checked=$((checked + 1))
      else
        echo "FAIL  $name --target=$target ptxas -arch=$arch:"; cat "$tmp/perr"; failed=$((failed + 1))
      fi
    done
  done
done <<<"$jobs"
echo "ptxas: $checked passed, $failed failed, $skipped examples not lowered yet"
[[ $failed -eq 0 && $checked -gt 0 ]]
