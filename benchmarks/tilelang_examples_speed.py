#!/usr/bin/env python3
"""tilelang_examples_speed.py -- TileLang's own example files timed under the real TileLang and under
tilelang_ptx on one GPU, by the latencies the examples print themselves.

Each file runs as a program, one run at a time (GPU timings must not overlap), alternating between the
two compilers (TileLang, ours, TileLang, ours, ...), `--runs` times each:
  TileLang:  PYTHON FILE                       (PYTHONPATH starts with --tilelang-site when given)
  ours:      PYTHON -m tilelang_ptx FILE       (PYTHONPATH starts with --ours-path, then --tilelang-site,
                                               for the examples' other imports; `tilelang` is ours)
in the file's folder, with its default arguments.  The latencies and throughputs a run prints ("Latency:
X ms", "tilelang: X ms", "Tile-lang: X TFlops", "Best latency: X", ...) are parsed (parse_metrics); the
labels naming a reference (torch, Ref, Triton, FA2, cuBLAS, ...) are kept apart from the kernel's own.
Per file: the median of each metric over the runs, then the speed ratio ours/TileLang (TileLang's latency
over ours; ours' TFLOPS over TileLang's) of every kernel metric both sides printed, their geometric mean
the file's ratio (> 1: ours faster).  Per family (the file's first folder under the examples root): the
geometric mean of its files' ratios.  A run that fails (exit status, timeout, no metric printed) is
recorded with its side and reason; a side that failed is not run again for that file.

  python3 benchmarks/tilelang_examples_speed.py EXAMPLES_DIR_OR_FILES... [--only REGEX] [--runs 3]
      [--timeout 300] [--jobs 1] [--tilelang-site DIR] [--ours-path DIR] [--python PY]
      [--tilelang-python PY] [--out examples_speed]      (writes OUT.json and OUT.md)"""
import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time

# ------------------------------------------------------------------------------------ output parsing
_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
# "label: number [unit]" (also "label = number", "label=number"); the unit may be glued to the number
_METRIC = re.compile(r"(?P<label>[A-Za-z][^:=|]*?)\s*[:=]\s*(?P<num>" + _NUM + r")\s*"
                     r"(?P<unit>ms|us|µs|seconds|sec|s|tflops|tflop/s|gflops|gflop/s)?(?![\w/])", re.I)
# a bare "number unit" ("{:.2f} ms".format(latency), "{:.2f} TFlops")
_BARE = re.compile(r"^\s*(?P<num>" + _NUM + r")\s*(?P<unit>ms|us|µs|tflops|gflops)\s*$", re.I)
_REFERENCE = re.compile(r"\b(ref|reference|torch|pytorch|triton|fla|fa2|flash[-_ ]?attn|cublas|cudnn|sdpa|"
                        r"naive|baseline|dense|cutlass|deepgemm|flashinfer|flashmla|xformers|eager)\b", re.I)
_NOT_A_RATE = re.compile(r"wall|end-to-end|saved|compile|total flops|speedup|config|repeat|diff|error|err\b|"
                         r"max|mean abs|tol|ratio|memory|bytes|size", re.I)
_TIME_WORDS = re.compile(r"latency|time|elapsed|duration", re.I)
_RATE_UNITS = {"tflops": 1.0, "tflop/s": 1.0, "gflops": 1e-3, "gflop/s": 1e-3}
_TIME_UNITS = {"ms": 1.0, "us": 1e-3, "µs": 1e-3, "s": 1e3, "sec": 1e3, "seconds": 1e3}


def _norm_label(label):
    label = re.sub(r"\x1b\[[0-9;]*m", "", label)
    label = re.sub(r"[\[\]()]", " ", label)
    label = re.sub(r"\b(latency|time|tflops|gflops|flops|avg|average|of|per iteration|kernel)\b", " ", label, flags=re.I)
    label = re.sub(r"[^A-Za-z0-9_.+-]+", " ", label).strip().lower()
    label = label.replace("tile-lang", "tilelang")
    return label or "-"


def rel_precision(num):
    """Half a unit of the last digit printed, relative to the number: "0.04" -> 0.125, "8.92" -> 0.00056."""
    mant, _, exp = num.lower().partition("e")
    digits = mant.split(".")[1] if "." in mant else ""
    value = abs(float(mant)) if float(mant) else 0.0
    return 0.5 * 10.0 ** -len(digits) / value if value else math.inf


def parse_metrics(text):
    """The timings a TileLang example printed: a list of {"label", "kind" ("ms" | "tflops"), "value",
    "reference" (bool: a baseline's, not the kernel's), "line", "rel_prec" (rel_precision)}.  Latencies in ms (a number with no unit
    after a label saying latency/time is ms, the unit of TileLang's profiler); throughputs in TFLOPS."""
    out = []
    for line in text.splitlines():
        raw = re.sub(r"\x1b\[[0-9;]*m", "", line).strip()
        if not raw:
            continue
        m = _BARE.match(raw)
        if m:
            segs = [("", m.group("num"), m.group("unit"))]
        else:  # "(repeat = 100)", "(Tile-lang)": a parenthesized aside is not a metric of its own
            text = re.sub(r"\([^()]*\)", " ", raw)
            segs = [(mm.group("label"), mm.group("num"), mm.group("unit")) for mm in _METRIC.finditer(text)]
        line_ref = False  # "Reference TFLOPS: 5.6, Latency: 4.5 s": the line's first label names whose
        for label, num, unit in segs:
            unit = (unit or "").lower()
            # the label of a later segment on the same line ("..., Latency: 3 ms") starts after a separator
            label = re.split(r"[,|;]", label)[-1].strip()
            if _NOT_A_RATE.search(label):
                continue
            if unit in _RATE_UNITS or (not unit and re.search(r"t?flops", label, re.I)):
                kind, value = "tflops", float(num) * _RATE_UNITS.get(unit, 1.0)
                if not unit and re.search(r"\bgflops\b", label, re.I):
                    value *= 1e-3
            elif unit in _TIME_UNITS or (not unit and _TIME_WORDS.search(label)):
                kind, value = "ms", float(num) * _TIME_UNITS.get(unit, 1.0)
            else:
                continue
            if not math.isfinite(value) or value <= 0:
                continue
            line_ref = line_ref or bool(_REFERENCE.search(label))
            out.append({"label": _norm_label(label), "kind": kind, "value": value, "reference": line_ref,
                        "line": raw[:200], "rel_prec": rel_precision(num)})
    return out


def metric_keys(metrics):
    """{(label, kind, n): value}: the n-th occurrence of a label/kind pair in the output (several kernels
    printed under one label keep their order)."""
    seen, keys = {}, {}
    for m in metrics:
        base = (m["label"], m["kind"])
        n = seen.get(base, 0)
        seen[base] = n + 1
        keys[(m["label"], m["kind"], n)] = m
    return keys


def median_metrics(runs):
    """The per-key median over several runs' parsed metrics; {key: {"value", "reference", "n", "rel_prec" (the
    coarsest run's)}}."""
    vals, ref, prec = {}, {}, {}
    for metrics in runs:
        for k, m in metric_keys(metrics).items():
            vals.setdefault(k, []).append(m["value"])
            ref[k] = m["reference"]
            prec[k] = max(prec.get(k, 0.0), m.get("rel_prec", 0.0))
    return {k: {"value": statistics.median(v), "reference": ref[k], "n": len(v), "rel_prec": prec[k]}
            for k, v in vals.items()}


def geomean(xs):
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    if not xs:
        return None
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


COARSE = 0.1  # the most two printed numbers' last digits may move their ratio, relative, for it to count


def compare(ours, theirs):
    """Speed ratios ours/TileLang of the kernel metrics both sides printed (medians, median_metrics): for a
    latency TileLang's / ours, for a throughput ours / TileLang's.  Latencies are used when both printed
    one finely enough, else throughputs.  Returns (file ratio = their geometric mean or None, {key label: ratio},
    reference drift = geomean of ours/TileLang over the baselines' latencies both runs printed (about 1
    when the two processes saw the same GPU)).  A pair printed too coarsely to tell a ratio within COARSE
    (TileLang's gqa_decode prints "0.04 ms" against "0.06 ms": a ratio anywhere from 0.54 to 0.82) is listed
    with " (coarse)" after its key and left out of the file ratio."""
    common = [k for k in ours if k in theirs and not ours[k]["reference"]]
    pairs, fine = {}, []
    for kind in ("ms", "tflops"):  # throughputs where no latency was printed finely enough
        if fine:
            break
        for k in common:
            if k[1] != kind:
                continue
            a, b = ours[k]["value"], theirs[k]["value"]
            r = b / a if kind == "ms" else a / b
            coarse = ours[k].get("rel_prec", 0.0) + theirs[k].get("rel_prec", 0.0) > COARSE
            pairs[f"{k[0]} [{k[1]}]" + (f" #{k[2] + 1}" if k[2] else "") + (" (coarse)" if coarse else "")] = r
            if not coarse:
                fine.append(r)
    drift = geomean([theirs[k]["value"] / ours[k]["value"] for k in ours
                     if k in theirs and ours[k]["reference"] and k[1] == "ms"])
    return geomean(fine), pairs, drift


def family_of(path, root):
    rel = os.path.relpath(path, root) if root else os.path.basename(path)
    parts = rel.split(os.sep)
    return parts[0] if len(parts) > 1 else os.path.basename(root or os.path.dirname(path))


def summarize(records):
    """{family: {"files", "compared", "geomean"}} and the overall geometric mean."""
    fams = {}
    for r in records:
        f = fams.setdefault(r["family"], {"files": 0, "compared": 0, "ratios": []})
        f["files"] += 1
        if r.get("ratio"):
            f["compared"] += 1
            f["ratios"].append(r["ratio"])
    out = {k: {"files": v["files"], "compared": v["compared"], "geomean": geomean(v["ratios"])}
           for k, v in sorted(fams.items())}
    return out, geomean([r["ratio"] for r in records if r.get("ratio")])


def markdown(records, fams, overall, meta):
    def f3(v):
        return "-" if v is None else f"{v:.3f}"
    lines = ["# TileLang examples: tilelang_ptx vs TileLang", "",
             f"{meta.get('when', '')}; {meta.get('runs')} runs per side, alternating; ratio = speed of ours / "
             "TileLang's (> 1: ours faster), the geometric mean over the kernel metrics both printed; "
             "drift = the same ratio over the baselines' (torch, ...) latencies (about 1: same GPU state).", "",
             "| family | file | TileLang | ours | ratio | drift | metrics / failure |", "|---|---|---|---|---|---|---|"]
    for r in records:
        def side(s):
            st = r[s]["status"]
            return "ok" if st == "ok" else st
        note = r.get("reason") or ", ".join(f"{k} {v:.3f}" for k, v in (r.get("pairs") or {}).items())
        lines.append(f"| {r['family']} | {r['rel']} | {side('tilelang')} | {side('ours')} | {f3(r.get('ratio'))} | "
                     f"{f3(r.get('drift'))} | {note.replace('|', '/')[:200]} |")
    lines += ["", "| family | files | compared | geomean ratio |", "|---|---|---|---|"]
    for k, v in fams.items():
        lines.append(f"| {k} | {v['files']} | {v['compared']} | {f3(v['geomean'])} |")
    lines.append(f"| **all** | {len(records)} | {sum(v['compared'] for v in fams.values())} | **{f3(overall)}** |")
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------------------- running
def find_files(inputs, only=None):
    """(root, [files]): the example_*.py files under each folder given, and each file given."""
    files, root = [], None
    for p in inputs:
        p = os.path.abspath(p)
        if os.path.isdir(p):
            root = root or p
            for d, _, fs in os.walk(p):
                files += [os.path.join(d, f) for f in fs if f.startswith("example_") and f.endswith(".py")]
        elif os.path.isfile(p):
            files.append(p)
        else:
            raise SystemExit(f"tilelang_examples_speed.py: no file or folder {p}")
    if root is None and files:
        root = os.path.commonpath([os.path.dirname(f) for f in files])
        if len(files) > 1 and all(os.path.dirname(f) == root for f in files):
            root = os.path.dirname(root)
    files = sorted(set(files))
    if only:
        files = [f for f in files if re.search(only, f)]
    return root, files


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="+", help="TileLang's examples/ folder (or a family folder), or example files")
    ap.add_argument("--only", help="keep the files whose path matches this regular expression")
    ap.add_argument("--runs", type=int, default=3, help="runs per side (default 3)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per run (default 300)")
    ap.add_argument("--jobs", type=int, default=1, help="runs at a time; only 1 (GPU timings must not overlap)")
    ap.add_argument("--tilelang-site", help="folder with TileLang (the unpacked site tarball): put first on "
                                            "PYTHONPATH of the TileLang runs")
    ap.add_argument("--ours-path", help="folder with tilelang_ptx (e.g. the bundle's python/): put first on "
                                        "PYTHONPATH of our runs (not needed when the wheel is installed)")
    ap.add_argument("--ours-without-site", action="store_true",
                    help="leave --tilelang-site off our runs' PYTHONPATH (by default it follows --ours-path)")
    ap.add_argument("--python", default=sys.executable, help="interpreter of our runs (default: this one)")
    ap.add_argument("--tilelang-python", help="interpreter of the TileLang runs (default: --python)")
    ap.add_argument("--out", default="examples_speed", help="writes OUT.json and OUT.md (default examples_speed)")
    a = ap.parse_args(argv)
    if a.jobs != 1:
        ap.error("--jobs: only 1 is supported (GPU timings of two runs must not overlap)")
    if a.runs < 1 or a.timeout <= 0:
        ap.error("--runs must be >= 1 and --timeout > 0")
    a.tilelang_python = a.tilelang_python or a.python
    return a


def side_command(side, path, a):
    """(argv, env) of one run."""
    env = dict(os.environ)
    # ours: the site too (after our package) unless --ours-without-site, so that the third-party modules an
    # example imports from it (einops, ...) are the same on both sides; `tilelang` is ours there anyway
    extra = ([a.tilelang_site] if side == "tilelang" else
             [a.ours_path] + ([] if a.ours_without_site else [a.tilelang_site]))
    extra = [p for p in extra if p]
    if extra:
        env["PYTHONPATH"] = os.pathsep.join(extra + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    if side == "tilelang":
        return [a.tilelang_python, path], env
    return [a.python, "-m", "tilelang_ptx", path], env


def last_error_line(text):
    lines = [l.strip() for l in text.strip().splitlines() if l.strip()]
    for l in reversed(lines):
        if re.match(r"^\w*(Error|Exception|Interrupt)\b|^\w+(\.\w+)*(Error|Exception):", l):
            return l[:300]
    return (lines[-1] if lines else "")[:300]


def run_once(side, path, a):
    """{"status": "ok" | "fail" | "timeout" | "no-metric", "reason", "metrics", "wall"}."""
    cmd, env = side_command(side, path, a)
    t = time.time()
    try:
        cp = subprocess.run(cmd, cwd=os.path.dirname(path), env=env, capture_output=True, text=True,
                            timeout=a.timeout)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "reason": f"timeout after {a.timeout:g}s", "metrics": [],
                "wall": round(time.time() - t, 1)}
    wall = round(time.time() - t, 1)
    metrics = parse_metrics(cp.stdout)
    if cp.returncode != 0:
        return {"status": "fail", "reason": f"exit {cp.returncode}: {last_error_line(cp.stderr or cp.stdout)}",
                "metrics": metrics, "wall": wall}
    if not any(not m["reference"] for m in metrics):
        return {"status": "no-metric", "reason": "no kernel latency or TFLOPS printed", "metrics": metrics,
                "wall": wall}
    return {"status": "ok", "reason": None, "metrics": metrics, "wall": wall}


def run_file(path, root, a, log):
    rec = {"file": path, "rel": os.path.relpath(path, root) if root else path, "family": family_of(path, root)}
    runs = {"tilelang": [], "ours": []}
    status = {"tilelang": None, "ours": None}
    for i in range(a.runs):
        for side in ("tilelang", "ours"):
            if status[side] not in (None, "ok"):
                continue
            r = run_once(side, path, a)
            runs[side].append(r)
            status[side] = r["status"]
            log(f"  {side:8s} run {i + 1}: {r['status']:9s} {r['wall']:6.1f}s "
                + (r["reason"] or ", ".join(f"{m['label']} {m['value']:.4g} {m['kind']}" for m in r["metrics"]
                                            if not m["reference"])[:160]))
        if all(status[s] not in (None, "ok") for s in status):
            break
    for side in runs:
        bad = [r for r in runs[side] if r["status"] != "ok"]
        rec[side] = {"status": bad[0]["status"] if bad else "ok", "reason": bad[0]["reason"] if bad else None,
                     "walls": [r["wall"] for r in runs[side]],
                     "medians": {f"{k[0]}|{k[1]}|{k[2]}": v for k, v in
                                 median_metrics([r["metrics"] for r in runs[side] if r["status"] == "ok"]).items()},
                     "outputs": [[m["line"] for m in r["metrics"]] for r in runs[side]]}
    if rec["tilelang"]["status"] == "ok" and rec["ours"]["status"] == "ok":
        ours = median_metrics([r["metrics"] for r in runs["ours"]])
        theirs = median_metrics([r["metrics"] for r in runs["tilelang"]])
        ratio, pairs, drift = compare(ours, theirs)
        rec.update(ratio=ratio, pairs=pairs, drift=drift)
        if ratio is None:
            rec["reason"] = "no kernel metric printed by both sides under the same label"
    else:
        failed = [s for s in ("tilelang", "ours") if rec[s]["status"] != "ok"]
        rec.update(ratio=None, pairs={}, drift=None,
                   reason="; ".join(f"{s}: {rec[s]['status']} ({rec[s]['reason']})" for s in failed))
    return rec


def main(argv=None):
    a = parse_args(argv)
    root, files = find_files(a.inputs, a.only)
    if not files:
        raise SystemExit("tilelang_examples_speed.py: no example files")

    def log(*x):
        print(*x, flush=True)
    meta = {"when": time.strftime("%Y-%m-%d %H:%M"), "runs": a.runs, "timeout": a.timeout, "root": root,
            "python": a.python, "tilelang_python": a.tilelang_python, "tilelang_site": a.tilelang_site,
            "ours_path": a.ours_path}
    records = []
    for n, f in enumerate(files, 1):
        log(f"[{n}/{len(files)}] {os.path.relpath(f, root)}")
        records.append(run_file(f, root, a, log))
        r = records[-1]
        log(f"  ratio ours/TileLang: " + (f"{r['ratio']:.3f}" if r["ratio"] else f"- ({r.get('reason')})"))
        fams, overall = summarize(records)  # written after every file: a stopped run keeps what it had
        with open(a.out + ".json", "w") as fh:
            json.dump({"meta": meta, "families": fams, "geomean": overall, "files": records}, fh, indent=1)
        with open(a.out + ".md", "w") as fh:
            fh.write(markdown(records, fams, overall, meta))
    fams, overall = summarize(records)
    log("")
    for k, v in fams.items():
        log(f"{k:32s} {v['compared']:3d}/{v['files']:3d} compared  geomean "
            + ("-" if v["geomean"] is None else f"{v['geomean']:.3f}"))
    log(f"{'all':32s} geomean " + ("-" if overall is None else f"{overall:.3f}"))
    log(f"wrote {a.out}.json and {a.out}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
