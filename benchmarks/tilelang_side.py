#!/usr/bin/env python3
"""tilelang_side.py -- the real TileLang and tilelang_ptx side by side in ONE process on a GPU, on the SAME
kernel sources (benchmarks/kernels/: the documented NN GEMM, the NT GEMM with T.use_swizzle(10) and C staged
through shared memory, FlashAttention forward in TileLang's BSHD layout and in BHSD), against cuBLAS (torch.matmul) and cuDNN
(scaled_dot_product_attention's cuDNN backend); with --only bwd, FlashAttention backward: TileLang's own
example_mha_bwd_bshd.py (from --examples, TileLang's examples/ folder; never committed here), its autograd
Function driven as written, under both compilers, against SDPA's FlashAttention-2 and cuDNN backward.

Each kernel file is loaded twice: tilelang_ptx.load_file binds it to this project's package (also after the
real TileLang was imported), and a plain import binds it to TileLang; every kernel object's type is checked
to be the compiler it was meant for.  Timing: after warm-up, the variants of one case run interleaved
(round-robin, `--reps` rounds of `--iters` calls, each round timed with CUDA events); the reported time is
the median round.  Every output is compared with torch's (max |diff| / max |ref|).  Without TileLang
importable the TileLang column is "-".

  python3 benchmarks/tilelang_side.py [--only gemm|fa|bwd] [--gemm M,N,K[,dtype] ...] [--attn B,H,S,D ...]
                                      [--bwd B,H,S,D ...] [--examples DIR] [--iters 10] [--reps 15] [--out side.json]

The backward's time is one torch.autograd.grad(O, (Q, K, V), dO) call (the backward of O.backward(dO) without
the accumulation into .grad): TileLang's preprocess, main and postprocess kernels plus the Function's host work.

Prints a table (TFLOPS, ours/TileLang, each/cuBLAS or each/cuDNN) and writes the JSON (--out)."""
import argparse
import importlib.util
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.join(HERE, "kernels")

DEFAULT_GEMM = [(4096, 4096, 4096, "float16"), (8192, 8192, 8192, "float16"), (4096, 11008, 4096, "float16"),
                (2048, 2048, 2048, "float16"), (4096, 4096, 4096, "bfloat16")]
DEFAULT_ATTN = [(1, 32, 4096, 128)]
DEFAULT_BWD = [(8, 32, 1024, 64), (8, 32, 1024, 128), (1, 32, 4096, 128)]
BWD_FILE = os.path.join("flash_attention", "example_mha_bwd_bshd.py")
GEMM_CFG = dict(block_M=128, block_N=256, block_K=64, num_stages=3, threads=256)
FA_CFG = dict(block_M=128, block_N=128, num_stages=2, threads=256)
DTYPES = ("float16", "bfloat16")


# ----------------------------------------------------------------------------------------- pure helpers
def parse_gemm(text):
    """'M,N,K[,dtype]' or 'MxNxK[:dtype]' -> (M, N, K, dtype); dtype float16 unless given."""
    t = text.replace("x", ",").replace(":", ",")
    parts = [p for p in t.split(",") if p]
    if len(parts) not in (3, 4):
        raise argparse.ArgumentTypeError(f"GEMM shape '{text}': expected M,N,K[,dtype]")
    try:
        m, n, k = (int(p) for p in parts[:3])
    except ValueError:
        raise argparse.ArgumentTypeError(f"GEMM shape '{text}': M, N and K must be integers") from None
    dt = parts[3] if len(parts) == 4 else "float16"
    if dt not in DTYPES or min(m, n, k) <= 0:
        raise argparse.ArgumentTypeError(f"GEMM shape '{text}': positive sizes and a dtype of {DTYPES}")
    return (m, n, k, dt)


def parse_attn(text):
    """'B,H,S,D' -> (B, H, S, D)."""
    parts = [p for p in text.replace("x", ",").split(",") if p]
    try:
        v = tuple(int(p) for p in parts)
    except ValueError:
        v = ()
    if len(v) != 4 or min(v) <= 0:
        raise argparse.ArgumentTypeError(f"attention shape '{text}': expected B,H,S,D (positive integers)")
    return v


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=("gemm", "fa", "bwd"),
                    help="run only the GEMM, the attention forward or the attention backward cases "
                         "(default: GEMM and forward; the backward needs --examples)")
    ap.add_argument("--gemm", type=parse_gemm, action="append", metavar="M,N,K[,dtype]",
                    help="a GEMM case (repeatable; default: the five of the issue)")
    ap.add_argument("--attn", type=parse_attn, action="append", metavar="B,H,S,D",
                    help="an attention case, run non-causal and causal (default 1,32,4096,128)")
    ap.add_argument("--bwd", type=parse_attn, action="append", metavar="B,H,S,D",
                    help="an attention backward case, run non-causal and causal (default: (8,32,1024,64), "
                         "(8,32,1024,128), (1,32,4096,128))")
    ap.add_argument("--examples", help="TileLang's examples/ folder (the backward's kernels: " + BWD_FILE + ")")
    ap.add_argument("--iters", type=int, default=10, help="calls per timed round (default 10)")
    ap.add_argument("--reps", type=int, default=15, help="timed rounds per variant (default 15)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed rounds first (default 3)")
    ap.add_argument("--no-tilelang", action="store_true", help="do not import the real TileLang")
    ap.add_argument("--out", default="tilelang_side.json", help="the JSON written (default tilelang_side.json)")
    a = ap.parse_args(argv)
    if a.iters < 1 or a.reps < 1 or a.warmup < 0:
        ap.error("--iters and --reps must be >= 1, --warmup >= 0")
    a.gemm = a.gemm or list(DEFAULT_GEMM)
    a.attn = a.attn or list(DEFAULT_ATTN)
    a.bwd = a.bwd or list(DEFAULT_BWD)
    if a.only == "bwd" and not a.examples:
        ap.error("--only bwd needs --examples (TileLang's examples/ folder)")
    return a


def gemm_flops(m, n, k):
    return 2.0 * m * n * k


def attn_flops(b, h, s, d, causal):
    return 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)


def bwd_flops(b, h, s, d, causal):
    """The backward's five S x S x D matmuls (2.5x the forward's two)."""
    return 2.5 * attn_flops(b, h, s, d, causal)


def speed_ratio(ms_a, ms_b):
    """How many times faster a is than b (ms_b / ms_a); None when either is missing."""
    if not ms_a or not ms_b:
        return None
    return ms_b / ms_a


def table_rows(records):
    """The printed table's rows (lists of strings) of the result records (see run_case)."""
    def num(v, f="{:.0f}"):
        return "-" if v is None else f.format(v)

    rows = [["case", "kernel", "ref", "ref TFLOPS", "TileLang", "ours", "ours/TileLang", "TileLang/ref",
             "ours/ref", "err TileLang", "err ours"]]
    for r in records:
        ms, fl = r["ms"], r["flops"]
        ref_ms = ms.get(r["ref"])
        tf = {k: (fl / v / 1e9 if v else None) for k, v in ms.items()}
        for var in r["variants"]:
            tl, ours = ms.get(f"tilelang_{var}"), ms.get(f"ours_{var}")
            err = r["err"]
            rows.append([r["case"], var, r["ref"], num(tf.get(r["ref"])), num(tf.get(f"tilelang_{var}")),
                         num(tf.get(f"ours_{var}")), num(speed_ratio(ours, tl), "{:.3f}"),
                         num(speed_ratio(tl, ref_ms), "{:.3f}"), num(speed_ratio(ours, ref_ms), "{:.3f}"),
                         short_err(err.get(f"tilelang_{var}")), short_err(err.get(f"ours_{var}"))])
    return rows


def short_err(e):
    if e is None:
        return "-"
    if isinstance(e, str):
        return "FAIL"
    return f"{e:.1e}"


def format_table(rows):
    w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for j, r in enumerate(rows):
        out.append("  ".join(c.ljust(w[i]) if i < 3 else c.rjust(w[i]) for i, c in enumerate(r)))
        if j == 0:
            out.append("  ".join("-" * x for x in w))
    return "\n".join(out)


# ------------------------------------------------------------------------------------------- GPU side
def log(*a):
    print(*a, flush=True)


def load_kernel_files(use_tilelang):
    """{"ours": (gemm module, fa module), "tilelang": (...) or None, "tilelang_version": str or None}."""
    import tilelang_ptx
    got = {"ours": tuple(tilelang_ptx.load_file(os.path.join(KERNELS, f), module_name=f"bench_{f[:-3]}_ours")
                         for f in ("gemm.py", "flash_attention.py")),
           "tilelang": None, "tilelang_version": None, "tilelang_error": None}
    if not use_tilelang:
        got["tilelang_error"] = "--no-tilelang"
        return got
    try:
        import tilelang
        got["tilelang_version"] = getattr(tilelang, "__version__", "?")
        mods = []
        for f in ("gemm.py", "flash_attention.py"):
            spec = importlib.util.spec_from_file_location(f"bench_{f[:-3]}_tilelang", os.path.join(KERNELS, f))
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            mods.append(mod)
        got["tilelang"] = tuple(mods)
    except Exception as e:  # no TileLang here: its column is "-"
        got["tilelang_error"] = f"{type(e).__name__}: {str(e)[:300]}"
    return got


def load_bwd_files(examples, use_tilelang):
    """{"ours": module, "tilelang": module or None, ...}: TileLang's example_mha_bwd_bshd.py imported for each
    compiler (its `attention` autograd Function)."""
    import tilelang_ptx
    path = os.path.join(examples, BWD_FILE)
    got = {"ours": tilelang_ptx.load_file(path, module_name="bench_mha_bwd_ours"), "tilelang": None,
           "tilelang_version": None, "tilelang_error": None}
    if not use_tilelang:
        got["tilelang_error"] = "--no-tilelang"
        return got
    try:
        import tilelang
        got["tilelang_version"] = getattr(tilelang, "__version__", "?")
        spec = importlib.util.spec_from_file_location("bench_mha_bwd_tilelang", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        got["tilelang"] = mod
    except Exception as e:
        got["tilelang_error"] = f"{type(e).__name__}: {str(e)[:300]}"
    return got


def compiler_of(kernel):
    return "ours" if type(kernel).__module__.startswith("tilelang_ptx") else "tilelang"


def interleaved(torch, fns, iters, reps, warmup):
    """Median ms per call of each function, the functions timed round-robin with CUDA events."""
    for _ in range(warmup):
        for f in fns.values():
            f()
    torch.cuda.synchronize()
    acc = {k: [] for k in fns}
    for _ in range(reps):
        for k, f in fns.items():
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            for _ in range(iters):
                f()
            e.record()
            e.synchronize()
            acc[k].append(s.elapsed_time(e) / iters)
    return {k: statistics.median(v) for k, v in acc.items()}


def rel_err(x, ref):
    d = (x.float() - ref.float()).abs().max().item()
    return d / max(ref.float().abs().max().item(), 1e-30)


def try_kernel(name, want, build, ref, fns, errs, compile_s):
    """Compiles (build() -> (kernel, call)), runs once, checks against ref; registers the timed call."""
    t = time.perf_counter()
    try:
        kernel, call = build()
        out = call()
        if compiler_of(kernel) != want:
            raise RuntimeError(f"{name} was compiled by {type(kernel).__module__}, not {want}")
        compile_s[name] = round(time.perf_counter() - t, 3)
        errs[name] = rel_err(out, ref)
        fns[name] = call
    except Exception as e:
        errs[name] = f"FAIL {type(e).__name__}: {str(e)[:400]}"
        log(f"  {name}: {errs[name]}")


def gemm_case(torch, mods, M, N, K, dname, a):
    tdt = getattr(torch, dname)
    A = torch.randn(M, K, device="cuda", dtype=tdt)
    B = torch.randn(K, N, device="cuda", dtype=tdt)
    Bt = B.t().contiguous()
    ref = A @ B
    fns, errs, comp = {"cublas": lambda: torch.matmul(A, B)}, {}, {}
    c = GEMM_CFG
    for who in ("tilelang", "ours"):
        if mods[who] is None:
            continue
        g = mods[who][0]

        def nn(g=g):
            kern = g.matmul(M, N, K, c["block_M"], c["block_N"], c["block_K"], dname, "float32",
                            num_stages=c["num_stages"], threads=c["threads"])
            return kern, (lambda: kern(A, B))

        def nt(g=g):
            kern = g.matmul_nt(M, N, K, c["block_M"], c["block_N"], c["block_K"], c["num_stages"], c["threads"],
                               True, dname, "float32")
            return kern, (lambda: kern(A, Bt))

        try_kernel(f"{who}_nn", who, nn, ref, fns, errs, comp)
        try_kernel(f"{who}_nt", who, nt, ref, fns, errs, comp)
    ms = interleaved(torch, fns, a.iters, a.reps, a.warmup)
    del A, B, Bt, ref
    torch.cuda.empty_cache()
    return {"case": f"gemm {M}x{N}x{K} {dname}", "kind": "gemm", "shape": [M, N, K], "dtype": dname, "ref": "cublas",
            "variants": ["nn", "nt"], "flops": gemm_flops(M, N, K), "ms": ms, "err": errs, "compile_s": comp,
            "config": dict(c)}


def attn_case(torch, mods, Bn, H, S, D, causal, a):
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q, k, v = (torch.randn(Bn, S, H, D, device="cuda", dtype=torch.float16) for _ in range(3))
    qh, kh, vh = (t.transpose(1, 2).contiguous() for t in (q, k, v))

    def sdpa(backend):
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(qh, kh, vh, is_causal=causal)

    ref_bhsd = sdpa(SDPBackend.FLASH_ATTENTION)
    ref = ref_bhsd.transpose(1, 2)  # (b, s, h, d)
    fns, errs, comp = {}, {}, {}
    try:
        errs["cudnn"] = rel_err(sdpa(SDPBackend.CUDNN_ATTENTION), ref_bhsd)
        fns["cudnn"] = lambda: sdpa(SDPBackend.CUDNN_ATTENTION)
        refname = "cudnn"
    except Exception as e:  # no cuDNN attention in this torch: FlashAttention-2 of SDPA is the reference
        errs["cudnn"] = f"FAIL {type(e).__name__}: {str(e)[:200]}"
        refname = "sdpa_flash"
    fns["sdpa_flash"] = lambda: sdpa(SDPBackend.FLASH_ATTENTION)
    for who in ("tilelang", "ours"):
        if mods[who] is None:
            continue
        fa = mods[who][1]
        for layout, args in (("bshd", (q, k, v)), ("bhsd", (qh, kh, vh))):
            def build(fa=fa, layout=layout, args=args):
                kern = fa.flashattn(Bn, H, S, D, causal, layout=layout, **FA_CFG)
                return kern, (lambda: kern(*args))

            try_kernel(f"{who}_fa_{layout}", who, build, ref if layout == "bshd" else ref_bhsd, fns, errs, comp)
    ms = interleaved(torch, fns, a.iters, a.reps, a.warmup)
    del q, k, v, qh, kh, vh, ref, ref_bhsd
    torch.cuda.empty_cache()
    return {"case": f"attn ({Bn},{H},{S},{D}){' causal' if causal else ''}", "kind": "attn",
            "shape": [Bn, H, S, D], "causal": causal, "ref": refname, "variants": ["fa_bshd", "fa_bhsd"],
            "flops": attn_flops(Bn, H, S, D, causal), "ms": ms, "err": errs, "compile_s": comp, "config": dict(FA_CFG)}


def bwd_case(torch, mods, Bn, H, S, D, causal, a):
    """FlashAttention backward at (Bn, H, S, D): each compiler's `attention` of TileLang's example (BSHD), SDPA's
    FlashAttention-2 and cuDNN (BHSD); gradients checked against FlashAttention-2's (max over dQ, dK, dV of
    max |diff| / max |ref|)."""
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q, k, v, do = (torch.randn(Bn, S, H, D, device="cuda", dtype=torch.float16) for _ in range(4))
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    qh, kh, vh = (t.detach().transpose(1, 2).contiguous().requires_grad_() for t in (q, k, v))
    doh = do.transpose(1, 2).contiguous()

    def grads(o, leaves, d):
        return lambda: torch.autograd.grad(o, leaves, d, retain_graph=True)

    fns, errs, comp, ref = {}, {}, {}, None
    for name, backend in (("sdpa_flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
        try:
            with sdpa_kernel(backend):
                o = F.scaled_dot_product_attention(qh, kh, vh, is_causal=causal)
            fns[name] = grads(o, (qh, kh, vh), doh)
            g = [t.transpose(1, 2) for t in fns[name]()]
            if ref is None:
                ref = g
            errs[name] = max(rel_err(x, r) for x, r in zip(g, ref))
        except Exception as e:
            errs[name] = f"FAIL {type(e).__name__}: {str(e)[:200]}"
            fns.pop(name, None)
    refname = "cudnn" if "cudnn" in fns else "sdpa_flash"
    for who in ("tilelang", "ours"):
        if mods[who] is None or ref is None:
            continue
        name = f"{who}_bwd"
        t = time.perf_counter()
        try:
            o = mods[who].attention(q, k, v, causal)
            fn = grads(o, (q, k, v), do)
            g = fn()
            comp[name] = round(time.perf_counter() - t, 3)
            errs[name] = max(rel_err(x, r) for x, r in zip(g, ref))
            fns[name] = fn
        except Exception as e:
            errs[name] = f"FAIL {type(e).__name__}: {str(e)[:400]}"
            log(f"  {name}: {errs[name]}")
    ms = interleaved(torch, fns, a.iters, a.reps, a.warmup)
    del q, k, v, do, qh, kh, vh, doh, ref
    torch.cuda.empty_cache()
    return {"case": f"bwd ({Bn},{H},{S},{D}){' causal' if causal else ''}", "kind": "bwd",
            "shape": [Bn, H, S, D], "causal": causal, "ref": refname, "variants": ["bwd"],
            "flops": bwd_flops(Bn, H, S, D, causal), "ms": ms, "err": errs, "compile_s": comp,
            "config": {"file": BWD_FILE}}


def main(argv=None):
    a = parse_args(argv)
    try:
        import torch
    except ImportError as e:
        sys.exit(f"tilelang_side.py: needs torch with CUDA ({e})")
    if not torch.cuda.is_available():
        sys.exit("tilelang_side.py: needs a CUDA GPU (torch.cuda.is_available() is False)")
    t = time.perf_counter()
    got = load_bwd_files(a.examples, not a.no_tilelang) if a.only == "bwd" else load_kernel_files(not a.no_tilelang)
    log(f"kernel files loaded in {time.perf_counter() - t:.2f}s; TileLang: "
        + (got["tilelang_version"] if got["tilelang"] else f"- ({got['tilelang_error']})"))
    mods = {"ours": got["ours"], "tilelang": got["tilelang"]}
    props = torch.cuda.get_device_properties(0)
    meta = {"device": torch.cuda.get_device_name(0), "sms": props.multi_processor_count, "torch": torch.__version__,
            "tilelang": got["tilelang_version"], "tilelang_error": got["tilelang_error"],
            "iters": a.iters, "reps": a.reps, "warmup": a.warmup}
    try:
        import tilelang_ptx
        meta["tilelang_ptx"] = getattr(tilelang_ptx, "__version__", "?")
        meta["tl_library"] = getattr(tilelang_ptx, "library_path", None)
    except Exception:
        pass
    log(f"{meta['device']}, {meta['sms']} SMs, torch {meta['torch']}")
    x = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)  # clocks up before the first case
    t = time.perf_counter()
    while time.perf_counter() - t < 1.5:
        torch.matmul(x, x)
    torch.cuda.synchronize()
    del x
    records = []
    if a.only in (None, "gemm"):
        for (M, N, K, dname) in a.gemm:
            records.append(gemm_case(torch, mods, M, N, K, dname, a))
            log("\n".join(format_table(table_rows(records[-1:])).splitlines()[2:]))
    if a.only in (None, "fa"):
        for (Bn, H, S, D) in a.attn:
            for causal in (False, True):
                records.append(attn_case(torch, mods, Bn, H, S, D, causal, a))
                log("\n".join(format_table(table_rows(records[-1:])).splitlines()[2:]))
    if a.only == "bwd":
        for (Bn, H, S, D) in a.bwd:
            for causal in (False, True):
                records.append(bwd_case(torch, mods, Bn, H, S, D, causal, a))
                log("\n".join(format_table(table_rows(records[-1:])).splitlines()[2:]))
    log("")
    log(format_table(table_rows(records)))
    with open(a.out, "w") as f:
        json.dump({"meta": meta, "results": records}, f, indent=1, default=str)
    log(f"\nwrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
