#!/usr/bin/env bash
# The device call that measures this project against the real TileLang on the GPU host (issue 31), from files
# carried from the development machine (as scripts/tilelang-examples-gpu-call.sh):
#   build-gpu/wheel.tar.xz + WHEEL_NAME   (the wheel's files; zipped back into dist/WHEEL_NAME here), or dist/*.whl
#   build-gpu/tl-examples.tar.xz          (TileLang's examples/ at a35008a42)
#   build-gpu/tilelang-site.tar.xz        (TileLang 0.1.15 and its own dependencies, not torch, as a site-packages
#                                          folder packed with tar -cJf: docs/testing.md "TileLang beside us")
# The wheel goes into a fresh venv (PyTorch from the host, as scripts/tilelang-host-acceptance.sh); then, one
# after the other (GPU timings must not overlap), the PARTS (default "side bwd examples"):
#   side      benchmarks/tilelang_side.py: the GEMM and FlashAttention forward sources under both, one process
#   bwd       benchmarks/tilelang_side.py --only bwd: TileLang's example_mha_bwd_bshd.py under both
#   examples  benchmarks/tilelang_examples_speed.py over the files matching SPEED_ONLY (default: the GEMM and
#             attention families), SPEED_RUNS runs each side (default 1),
#             SPEED_TIMEOUT s per run (default 120)
# Results under $OUT/speed (side.json/.txt, bwd.json/.txt, examples_speed.json/.md).  Env SIDE_ARGS and BWD_ARGS
# add arguments to the two side.py runs (e.g. SIDE_ARGS="--only fa").
set -u
cd "$(dirname "$0")/.." || exit 2
root=$PWD
out=${OUT:-$root/speed-out}/speed
mkdir -p "$out"
if [[ -f build-gpu/wheel.tar.xz && -n "${WHEEL_NAME:-}" ]] && ! ls dist/*.whl >/dev/null 2>&1; then
  rm -rf /tmp/whl && mkdir -p /tmp/whl dist && tar -xJf build-gpu/wheel.tar.xz -C /tmp/whl &&
    (cd /tmp/whl && python3 -m zipfile -c "$root/dist/$WHEEL_NAME" ./*)
fi
mkdir -p /tmp/tlx /tmp/site && tar -xJf build-gpu/tl-examples.tar.xz -C /tmp/tlx &&
  tar -xJf build-gpu/tilelang-site.tar.xz -C /tmp/site || exit 2
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
venv=/tmp/speed-venv
python3 -m venv --system-site-packages "$venv" || exit 2
purelib=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
python3 -c 'import os, torch, numpy
for m in (torch, numpy): print(os.path.dirname(os.path.dirname(os.path.realpath(m.__file__))))' |
  sort -u >"$purelib/host_torch.pth" || exit 2
"$venv/bin/python" -m pip install -q --no-deps --no-index dist/*.whl || exit 2
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} TL_CACHE=0
for part in ${PARTS:-side bwd examples}; do
  echo "== $part at $SECONDS s"
  case $part in
    side)
      # shellcheck disable=SC2086
      PYTHONPATH=/tmp/site "$venv/bin/python" benchmarks/tilelang_side.py ${SIDE_ARGS:-} --out "$out/side.json" \
        >"$out/side.txt" 2>&1
      echo "side: exit $?"; tail -20 "$out/side.txt" ;;
    bwd)
      # shellcheck disable=SC2086
      PYTHONPATH=/tmp/site "$venv/bin/python" benchmarks/tilelang_side.py --only bwd --examples /tmp/tlx/examples \
        ${BWD_ARGS:-} --out "$out/bwd.json" >"$out/bwd.txt" 2>&1
      echo "bwd: exit $?"; tail -12 "$out/bwd.txt" ;;
    examples)
      only=${SPEED_ONLY:-'/(gemm|gemm_fp8|deepseek_deepgemm|gemm_splitk|gemm_streamk|dequantize_gemm|blocksparse_gemm|flash_attention|flash_decoding|deepseek_mla|attention_sink|blocksparse_attention)/'}
      "$venv/bin/python" benchmarks/tilelang_examples_speed.py /tmp/tlx/examples --only "$only" \
        --runs "${SPEED_RUNS:-1}" --timeout "${SPEED_TIMEOUT:-120}" --tilelang-site /tmp/site \
        --python "$venv/bin/python" --tilelang-python python3 --out "$out/examples_speed" >"$out/examples.txt" 2>&1
      echo "examples: exit $?"; tail -40 "$out/examples_speed.md" 2>/dev/null || tail -20 "$out/examples.txt" ;;
    *) echo "unknown part $part" ;;
  esac
done
echo "done at $SECONDS s"
