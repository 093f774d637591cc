#!/usr/bin/env bash
# The AOT export without a GPU (issue 32; docs/aot.md): exports three example kernels with tl-opt --emit=c,
# builds each exported file alone with the system cc as C99 and C11 (-pedantic -Werror), links them with
# test/aot/aot_fake_main.c and the fake CUDA driver (benchmarks/launch/fake_cuda.c) in place of libcuda, and
# runs it: the launches and every bad-argument text are compared with libtilelang's on the same driver.
# Usage: aot_fake.sh BUILD_DIR [SANITIZER_FLAGS] (run from the source directory; ctest unit/aot_fake; the flags
# are the build's -fsanitize=..., for linking the test with a sanitized libtilelang).
set -euo pipefail
build=$(cd "$1" && pwd)
fake=$build/gpu-bin/libtl_fake_cuda.so
san=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc=${CC:-cc}
opt=("$build/tl-opt" --emit=c --target=sm_80)
"${opt[@]}" -D M=256 -D N=256 -D K=256 examples/gemm.py -o "$tmp"
"${opt[@]}" examples/elementwise_add_1d.py -o "$tmp/add1d.c"
"${opt[@]}" --export-name=add2d -D M=64 -D N=128 examples/elementwise_add.py -o "$tmp"
grep -q "tlaot_cubin" "$tmp/gemm.c" && echo "aot_fake: gemm.c embeds a cubin (ptxas)" || echo "aot_fake: PTX only (no ptxas)"
for f in gemm add1d add2d; do
  for std in c99 c11; do
    "$cc" -std=$std -pedantic -Wall -Wextra -Werror -fPIC -c "$tmp/$f.c" -o "$tmp/$f.$std.o"
  done
done
# the exported objects need only libcuda (here the fake): no libm, no libtilelang
"$cc" -shared -o "$tmp/libonly.so" "$tmp/gemm.c99.o" "$tmp/add1d.c99.o" "$tmp/add2d.c99.o" "$fake" -lpthread -Wl,--no-undefined
"$cc" $san -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -I"$tmp" -Iinclude test/aot/aot_fake_main.c \
  "$tmp/gemm.c99.o" "$tmp/add1d.c99.o" "$tmp/add2d.c99.o" -o "$tmp/aot_fake" \
  "$fake" -L"$build" -ltilelang -lpthread -Wl,-rpath,"$build:$build/gpu-bin"
TL_CUDA_DRIVER=$fake TL_FAKE_CUDA_DEVICES=2 TL_CACHE=0 "$tmp/aot_fake"

# examples/aot/main.c (the user's program, with cuda.h) against the same fake: it builds, its refused call gives
# the runtime's text and the output is allocated and described; the fake driver computes nothing and copies no
# data, so its element check must report FAIL there (which shows that check can fail)
cuda_inc=${CUDA_HOME:-/usr/local/cuda}/include
if [[ -f $cuda_inc/cuda.h ]]; then
  "$cc" $san -std=c11 -pedantic -Wall -Wextra -Werror -I"$tmp" -I"$cuda_inc" examples/aot/main.c "$tmp/gemm.c99.o" \
    -o "$tmp/example" "$fake" -lm -lpthread -Wl,-rpath,"$build/gpu-bin"
  set +e
  TL_FAKE_CUDA_DEVICES=1 "$tmp/example" > "$tmp/example.out" 2>&1
  rc=$?
  set -e
  cat "$tmp/example.out"
  grep -qx "refused as expected: argument 'B' (#1): dtype: expected float16, got float32" "$tmp/example.out"
  grep -q "C shape \[256, 256\]" "$tmp/example.out"
  [[ $rc -eq 1 ]] && tail -1 "$tmp/example.out" | grep -qx FAIL
  echo "aot_fake: examples/aot/main.c builds and runs on the fake driver (its FAIL is the fake's missing data)"
else
  echo "aot_fake: no cuda.h under $cuda_inc: examples/aot/main.c not built"
fi
