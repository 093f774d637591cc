#!/usr/bin/env python3
"""FlashAttention forward: our kernel and PyTorch's scaled_dot_product_attention, timed in one process.

Issue 19, acceptance 1 ("each ratio from one process"): for head dim 128, (batch 1, 32 heads, 4096
tokens) and (batch 8, 32 heads, 1024 tokens), causal and non-causal, f16 and bf16, this script times
  * sdpa_flash, sdpa_cudnn: torch.nn.functional.scaled_dot_product_attention with the FLASH_ATTENTION
    (FlashAttention-2) and CUDNN_ATTENTION backends (torch.nn.attention.sdpa_kernel);
  * ours: examples/flash_attention.py through the Python package (python/tilelang_ptx, imported with
    tilelang.load_file, compiled with tilelang.compile and pass_configs) at ONE stated -D set,
    OURS_DEFINES below (block_M=128 block_N=128 threads=256 num_stages=2: the sm_90a attention form of
    lib/Lower/Hopper/warp_specialize.c, with the compiler's default schedule: no tl.attention_* config given),
    with fast math (pass config tl.enable_fast_math, as nvcc --use_fast_math builds FlashAttention-2);
    ours_nofm: the same without fast math (f16 only); ours_plain: tl.attention_overlap and
    tl.attention_persistent given False (one tile a block, the loop body in source order);
    ours_pingpong (only with --pingpong): the same with the pass config tl.attention_pingpong (the two
    consumer warpgroups take turns at the tensor cores, lib/Lower/Hopper/warp_specialize.c; measured no
    faster, 2026-12-02); ours_overlap: the same with the pass config tl.attention_overlap (each
    consumer warpgroup's softmax of key block k under its own P·V of block k - 1,
    lib/Lower/Hopper/attention_overlap.c); ours_persist: with tl.attention_persistent (a persistent grid of
    one block per SM looping over the output tiles, causal ones longest first); ours_persist_overlap:
    both (--no-variants leaves these out);
  * bf16: the example with its `dtype = "float16"` line read as "bfloat16" (a temporary copy).
Timing is interleaved: after warm-ups, ROUNDS rounds each time every implementation once (CUDA events
around INNER back-to-back launches, so the host's launch cost is hidden behind the GPU's queue); an
implementation's time is the median of its rounds.  TFLOP/s = 4*B*H*S^2*D (halved when causal).
Then (f16; --no-checks leaves them out) the correctness cases of acceptance 2, CHECK_CASES: head dims 64
and 256, GQA (examples/flash_attention_gqa.py, 32 query heads on 8 KV heads), seq_len 1000, causal and not.
Each of our outputs is checked per element against SDPA's output on the same inputs (the flash backend;
cuDNN where flash is unavailable): |ours - sdpa| <= 2e-3 + 2e-3*|sdpa| for f16, 4e-3 + 4e-3*|sdpa|
for bf16 (the issue's tolerances), zero mismatches (a non-finite element is a mismatch).

--ours DIR (kept for scripts/run-gpu.sh): DIR was written by test/GPU/test_flash_attention with
TL_FA_DUMP_DIR=DIR (cases.txt: "name B H S D causal ms tflops config"; <name>.bin: q, k, v, o as raw
f16); those outputs are checked against SDPA at the same tolerance and reported as rows "ours_c ..."
(timed in that other process: not a same-process ratio).

CSV (stdout, and --csv FILE): impl,dtype,batch,heads,seq,dim,causal,ms,tflops,vs_flash,vs_cudnn,check
Without PyTorch or a GPU it prints a SKIP line and exits 0; without the package (libtilelang), our rows
are left out with a note.  Exit 1 when an output of ours differs from SDPA's.
  python3 benchmarks/attention/sdpa.py [--dtypes f16,bf16] [--rounds 15] [--inner 10] [--no-ours]
                                       [--no-checks] [--no-variants] [--pingpong] [--ours DIR] [--csv FILE]
"""
import argparse
import os
import re
import shutil
import sys
import tempfile

SHAPES = [(1, 32, 4096, 128), (8, 32, 1024, 128)]
OURS_DEFINES = dict(block_M=128, block_N=128, threads=256, num_stages=2)
TOL = {"f16": 2e-3, "bf16": 4e-3}


def repo_root():
    """The tree (or GPU bundle) this script lies in: benchmarks/attention/ -> ../.."""
    return os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def import_package():
    """tilelang_ptx from this tree's python/ (or the bundle's; it finds libtilelang itself, _lib.py);
    None (and a note) when it cannot be imported."""
    root = repo_root()
    if os.path.isdir(os.path.join(root, "python", "tilelang_ptx")):
        sys.path.insert(0, os.path.join(root, "python"))
    try:
        import tilelang_ptx
        return tilelang_ptx
    except Exception as e:  # noqa: BLE001 - any failure means "our kernel cannot run here"
        print(f"note: tilelang_ptx is not importable ({e}): our kernel's rows are left out", file=sys.stderr)
        return None


def example_factory(tl, dtype, tmpdir):
    """examples/flash_attention.py's undecorated factory (it returns the @T.prim_func), the example's
    dtype line rewritten for bf16."""
    path = os.path.join(repo_root(), "examples", "flash_attention.py")
    if dtype == "bf16":
        text = open(path).read()
        text, n = re.subn(r'dtype = "float16"', 'dtype = "bfloat16"', text)
        if n != 1:
            raise RuntimeError(f"{path}: no single `dtype = \"float16\"` line to rewrite for bfloat16")
        path = os.path.join(tmpdir, "flash_attention_bf16.py")
        with open(path, "w") as f:
            f.write(text)
    mod = tl.load_file(path, module_name=f"sdpa_bench_fa_{dtype}")
    return mod.flashattn.func


IMPL_DEFINES = {}  # impl name -> the -D set it was compiled with (the CSV's label)


def parse_also(text):
    """--also NAME:k=v,k=v:cfg,cfg -> (impl name, defines, pass configs): our kernel at OURS_DEFINES updated
    by the k=v (integers), with fast math and the listed this-project configs (tl.attention_<cfg>: True,
    no_<cfg>: False; with none of them given the compiler's default schedule applies)."""
    f = text.split(":")
    if len(f) != 3 or not f[0]:
        raise argparse.ArgumentTypeError(f"--also {text!r}: expected NAME:k=v,...:cfg,...")
    defs = dict(OURS_DEFINES)
    for kv in filter(None, f[1].split(",")):
        k, _, v = kv.partition("=")
        defs[k] = int(v)
    pc = {"tl.enable_fast_math": True}
    pc.update({f"tl.attention_{c.removeprefix('no_')}": not c.startswith("no_") for c in filter(None, f[2].split(","))})
    return (f"ours_{f[0]}", defs, pc)


def our_impls(tl, factory, b, h, s, d, causal, dtype, variants, pingpong=False, also=()):
    """[(impl name, kernel(q, k, v) -> o or None, why not)] of our kernel at OURS_DEFINES (and --also's)."""
    out = []
    configs = [("ours", {"tl.enable_fast_math": True})]
    if dtype == "f16":
        configs.append(("ours_nofm", {}))
    if pingpong:
        configs.append(("ours_pingpong", {"tl.enable_fast_math": True, "tl.attention_pingpong": True}))
    if variants:
        configs.append(("ours_plain", {"tl.enable_fast_math": True, "tl.attention_overlap": False,
                                       "tl.attention_persistent": False}))
        configs.append(("ours_overlap", {"tl.enable_fast_math": True, "tl.attention_overlap": True}))
        configs.append(("ours_persist", {"tl.enable_fast_math": True, "tl.attention_persistent": True}))
        configs.append(("ours_persist_overlap", {"tl.enable_fast_math": True, "tl.attention_persistent": True,
                                                 "tl.attention_overlap": True}))
    configs = [(n, pc, OURS_DEFINES) for n, pc in configs] + [(n, pc, defs) for n, defs, pc in also]
    for name, pc, defs in configs:
        IMPL_DEFINES[name] = defs
        try:
            k = tl.compile(factory(b, h, s, d, causal, **defs), out_idx=[3], pass_configs=pc)
        except Exception as e:  # noqa: BLE001 - a compile failure is a failed row
            out.append((name, None, f"FAIL (compile: {str(e).splitlines()[0] if str(e) else type(e).__name__})"))
            continue
        out.append((name, k, ""))
    return out


# Issue 19 acceptance 2 (correctness only, f16, fast math, causal and not): head dims 64 and 256, GQA with
# 32 query heads on 8 KV heads (examples/flash_attention_gqa.py as written), and seq_len 1000 (not a tile
# multiple); (file, shape (B, H, HKV, S, D), -D set)
CHECK_CASES = [("fa", (1, 32, 32, s, d), dict(OURS_DEFINES) if d != 256 else
                dict(block_M=128, block_N=64, threads=256, num_stages=2))
               for s in (4096, 1000) for d in (64, 256)] + \
              [("fa", (1, 32, 32, 1000, 128), dict(OURS_DEFINES))] + \
              [("gqa", (1, 32, 8, s, 128), {}) for s in (4096, 1000)]


def check_cases(tl, torch, factories, reference, check, rows):
    """CHECK_CASES against SDPA (K and V repeated per query-head group for GQA); returns the mismatch
    count.  A row per case: impl "check <file> <-D set>", no time."""
    failed = 0
    for kind, (b, h, hkv, s, d), defs in CHECK_CASES:
        for causal in (False, True):
            q = torch.empty(b, h, s, d, dtype=torch.float16, device="cuda").uniform_(-1, 1)
            k, v = (torch.empty(b, hkv, s, d, dtype=torch.float16, device="cuda").uniform_(-1, 1) for _ in range(2))
            label = f"check {'flash_attention_gqa.py' if kind == 'gqa' else 'flash_attention.py'} " + \
                " ".join(f"{n}={x}" for n, x in defs.items())
            try:
                args = (b, h, hkv, s, d, causal) if kind == "gqa" else (b, h, s, d, causal)
                kern = tl.compile(factories[kind](*args, **defs), out_idx=[3],
                                  pass_configs={"tl.enable_fast_math": True})
                o = kern(q, k, v)
                g = h // hkv
                bad, c = check(o, reference(q, k.repeat_interleave(g, 1), v.repeat_interleave(g, 1), causal), "f16")
            except Exception as e:  # noqa: BLE001 - a compile or launch failure is a failed row
                bad, c = 1, f"FAIL ({str(e).splitlines()[0]})"
            failed += bad
            rows.append((label, "f16", b, f"{h}/{hkv}" if kind == "gqa" else h, s, d, int(causal), "", "", "", "",
                         c))
            del q, k, v
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ours", help="directory written by test_flash_attention (TL_FA_DUMP_DIR)")
    ap.add_argument("--csv", help="also write the CSV here")
    ap.add_argument("--dtypes", default="f16,bf16", help="comma-separated: f16, bf16")
    ap.add_argument("--rounds", type=int, default=15, help="interleaved rounds (median)")
    ap.add_argument("--inner", type=int, default=10, help="launches between a round's two CUDA events")
    ap.add_argument("--no-ours", action="store_true", help="time SDPA alone")
    ap.add_argument("--no-checks", action="store_true",
                    help="leave out the correctness cases (head dims 64/256, GQA, seq_len 1000)")
    ap.add_argument("--no-variants", action="store_true",
                    help="leave out the schedule variants ours_plain, ours_overlap, ours_persist, "
                         "ours_persist_overlap")
    ap.add_argument("--pingpong", action="store_true", help="time the ping-pong variant ours_pingpong too")
    ap.add_argument("--also", action="append", type=parse_also, default=[],
                    help="NAME:k=v,...:cfg,... also time ours_NAME: OURS_DEFINES with k=v, fast math and the "
                         "pass configs tl.attention_<cfg> (e.g. persist:block_N=176:persistent,overlap)")
    ap.add_argument("--shapes", help="these B,H,S,D shapes instead of SHAPES, e.g. 8x32x1024x128 (comma-separated)")
    ap.add_argument("--causal", choices=("both", "0", "1"), default="both", help="causal, non-causal or both")
    args = ap.parse_args()
    try:
        import torch
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except Exception as e:  # noqa: BLE001 - any import failure means "no PyTorch here"
        print(f"SKIP: PyTorch with torch.nn.attention is not available ({e})")
        return 0
    if not torch.cuda.is_available():
        print("SKIP: torch.cuda.is_available() is False")
        return 0
    dev = torch.device("cuda")
    print(f"# torch {torch.__version__}, {torch.cuda.get_device_name(0)}; ours: examples/flash_attention.py "
          f"{' '.join(f'{k}={v}' for k, v in OURS_DEFINES.items())}", file=sys.stderr)
    tl = None if args.no_ours else import_package()
    tdt = {"f16": torch.float16, "bf16": torch.bfloat16}
    dtypes = [x for x in args.dtypes.split(",") if x]
    for x in dtypes:
        if x not in tdt:
            ap.error(f"--dtypes: unknown {x!r} (f16, bf16)")

    def flops(b, h, s, d, causal):
        return 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)

    def event_ms(fn):
        a, z = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(args.inner):
            fn()
        z.record()
        return a, z

    def median(t):
        t = sorted(t)
        n = len(t)
        return t[n // 2] if n % 2 else 0.5 * (t[n // 2 - 1] + t[n // 2])

    def interleaved_ms(fns):
        """{name: median ms per launch} over args.rounds rounds, each timing every fn once in turn."""
        for fn in fns.values():
            for _ in range(3):
                fn()
        torch.cuda.synchronize()
        evs = {n: [] for n in fns}
        for _ in range(args.rounds):
            for n, fn in fns.items():
                evs[n].append(event_ms(fn))
        torch.cuda.synchronize()
        return {n: median([a.elapsed_time(z) / args.inner for a, z in e]) for n, e in evs.items()}

    backends = [("sdpa_flash", SDPBackend.FLASH_ATTENTION), ("sdpa_cudnn", SDPBackend.CUDNN_ATTENTION)]

    def sdpa(q, k, v, causal, backend):
        with sdpa_kernel(backends=[backend]):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    def reference(q, k, v, causal):
        for _, be in backends:  # flash first; cuDNN if flash is unavailable
            try:
                return sdpa(q, k, v, causal, be).float()
            except RuntimeError:
                continue
        return F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)

    def check(o, ref, dtype):
        tol = TOL[dtype]
        err = (o.float() - ref).abs()
        bad = int(((err > tol + tol * ref.abs()) | ~torch.isfinite(o.float())).sum().item())
        return bad, f"{'PASS' if bad == 0 else 'FAIL'} max_err={err.max().item():.3g} mismatches={bad}"

    dumped = {}
    if args.ours:
        meta = os.path.join(args.ours, "cases.txt")
        if os.path.exists(meta):
            for line in open(meta):
                f = line.split()
                if len(f) >= 8:
                    dumped[(int(f[1]), int(f[2]), int(f[3]), int(f[4]), f[5] == "1")] = \
                        (f[0], float(f[6]), f[8] if len(f) > 8 else "")
        else:
            print(f"note: {meta} not found: test_flash_attention's results are not included", file=sys.stderr)

    rows = [("impl", "dtype", "batch", "heads", "seq", "dim", "causal", "ms", "tflops", "vs_flash", "vs_cudnn",
             "check")]
    failed = False
    tmpdir = tempfile.mkdtemp(prefix="sdpa_bench_")
    factories = {}
    for dtype in dtypes:
        if tl is not None:
            try:
                factories[dtype] = example_factory(tl, dtype, tmpdir)
            except Exception as e:  # noqa: BLE001 - reported, the SDPA rows still come
                print(f"note: examples/flash_attention.py ({dtype}) cannot be loaded: {e}", file=sys.stderr)
        torch.manual_seed(0)
        shapes = [tuple(int(x) for x in sh.split("x")) for sh in args.shapes.split(",")] if args.shapes else SHAPES
        for (b, h, s, d) in shapes:
            for causal in (False, True):
                if args.causal != "both" and int(causal) != int(args.causal):
                    continue
                q, k, v = (torch.empty(b, h, s, d, dtype=tdt[dtype], device=dev).uniform_(-1, 1) for _ in range(3))
                fl = flops(b, h, s, d, causal)
                fns, checks = {}, {}
                for name, be in backends:
                    try:
                        sdpa(q, k, v, causal, be)
                        fns[name] = (lambda be=be: sdpa(q, k, v, causal, be))
                    except RuntimeError as e:
                        print(f"SKIP: {name} {dtype} ({b},{h},{s},{d}) causal={causal}: {str(e).splitlines()[0]}",
                              file=sys.stderr)
                        rows.append((name, dtype, b, h, s, d, int(causal), "", "", "", "", "unavailable"))
                if dtype in factories:
                    ref = reference(q, k, v, causal)
                    for name, kern, why in our_impls(tl, factories[dtype], b, h, s, d, causal, dtype,
                                                     not args.no_variants, args.pingpong, args.also):
                        try:
                            if kern is None:
                                raise RuntimeError(why)
                            bad, checks[name] = check(kern(q, k, v), ref, dtype)
                            fns[name] = (lambda kern=kern: kern(q, k, v))  # timed even when it mismatches
                        except Exception as e:  # noqa: BLE001 - a launch failure is a failed row, not timed
                            bad = 1
                            rows.append((name, dtype, b, h, s, d, int(causal), "", "", "", "",
                                         str(e) if kern is None else f"FAIL ({str(e).splitlines()[0]})"))
                        failed = failed or bad != 0
                    del ref
                ms = interleaved_ms(fns)
                t_flash, t_cudnn = ms.get("sdpa_flash"), ms.get("sdpa_cudnn")
                for name, t in ms.items():
                    label = name if not name.startswith("ours") else \
                        f"{name} {' '.join(f'{k}={v}' for k, v in IMPL_DEFINES.get(name, OURS_DEFINES).items())}"
                    rows.append((label, dtype, b, h, s, d, int(causal), f"{t:.4f}", f"{fl / t / 1e9:.1f}",
                                 f"{t_flash / t:.3f}" if t_flash else "", f"{t_cudnn / t:.3f}" if t_cudnn else "",
                                 checks.get(name, "")))
                key = (b, h, s, d, causal)
                if dtype == "f16" and key in dumped:
                    cname, t, cfg = dumped[key]
                    n = b * h * s * d
                    try:
                        raw = torch.from_file(os.path.join(args.ours, cname + ".bin"), shared=False, size=4 * n,
                                              dtype=torch.float16)
                        qo, ko, vo, oo = (raw[i * n:(i + 1) * n].view(b, h, s, d).to(dev) for i in range(4))
                        bad, c = check(oo, reference(qo, ko, vo, causal), dtype)
                    except (RuntimeError, OSError) as e:
                        bad, c = 1, f"unreadable ({e})"
                    failed = failed or bad != 0
                    rows.append(("ours_c (test_flash_attention's process) " + cfg, dtype, b, h, s, d, int(causal),
                                 f"{t:.4f}", f"{fl / t / 1e9:.1f}", "", "", c))
                del q, k, v, fns
                torch.cuda.empty_cache()
    if tl is not None and "f16" in factories and not args.no_checks:
        try:
            gqa = tl.load_file(os.path.join(repo_root(), "examples", "flash_attention_gqa.py"),
                               module_name="sdpa_bench_gqa").flashattn_gqa.func
            failed = check_cases(tl, torch, {"fa": factories["f16"], "gqa": gqa}, reference, check, rows) != 0 \
                or failed
        except Exception as e:  # noqa: BLE001 - reported as a failure
            print(f"FAIL: examples/flash_attention_gqa.py cannot be loaded: {e}", file=sys.stderr)
            failed = True
    shutil.rmtree(tmpdir, ignore_errors=True)
    text = "\n".join(",".join(str(x) for x in r) for r in rows) + "\n"
    sys.stdout.write(text)
    if args.csv:
        with open(args.csv, "w") as f:
            f.write(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
