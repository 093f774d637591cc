#!/usr/bin/env python3
"""Mutation fuzzer of the whole compile path (issue 15): test tooling.

Mutates the examples and the test kernel files (numbers to edge values and
larger or smaller extents, swapped or replaced names, dropped / duplicated /
swapped lines, changed dtypes, loop kinds, operators, tile ops and buffer
scopes), runs `tl-opt --emit=ptx` and `tl-run --device=cpu --check` on each
mutant (any build: pass the ASan+UBSan build's tools to get sanitizer
reports), and classifies the outcome:

  rejected     tl-opt (or tl-run, while compiling or running) stopped with a
               located `file:line:col: error:` diagnostic
  pass         accepted, and the CPU executor agrees with the reference
               evaluator (`check: PASS`)
  warned-fail  accepted by tl-opt, and the check fails after a located
               warning (tl-opt, tl-run) or a located run-time error (the
               reference evaluator's or the executor's): it names the
               construct at fault, which is allowed
  no-check     accepted; tl-run cannot run it (a usage error such as a
               missing --arg after the retries, inputs too large for the
               host's memory, or the seed's own run is too slow for the run
               budget)
  slow-run     accepted; the CPU executor's run went past --run-budget
               (default 10 s: its time grows with the shapes a mutant enlarged)
  order-dep    the check fails on a kernel with T.atomic_add(...,
               return_prev=True): the values returned depend on the order of
               the atomics, which the reference evaluator and the executor
               need not share (not a wrong result; not kept)
  check-fail   accepted without a warning, and the check fails: a silent
               wrong result (kept)
  crash        a signal, a sanitizer report or an internal error (kept)
  hang         tl-opt ran past --opt-budget (default 10 s) (kept)
  unlocated    an error diagnostic without a location (kept; `<command
               line>:` errors about tl-run's own options excepted)

Kept inputs are written to --keep DIR (default: test/fuzz/kept) as
CLASS-HASH.py, with a line in DIR/INDEX (class, seed file, mutations).
`--replay DIR` runs every kept input again and fails when one is still in a
kept class (test/Lower/fuzz_kept.test runs it under lit).

  usage: mutate.py --tl-opt PATH --tl-run PATH [--seconds N | --runs N]
                   [--seed N] [--keep DIR] [--src ROOT]
         mutate.py --tl-opt PATH --tl-run PATH --replay DIR
         mutate.py --tl-opt PATH --extents     (every example's integer factory
                   parameters set to large values: PTX or an error in budget)
Exit status: 0 when nothing was kept (replay: every input is in an allowed
class), 1 otherwise.
"""
import argparse
import hashlib
import os
import random
import re
import subprocess
import sys
import tempfile
import time

KEPT_CLASSES = ("check-fail", "crash", "hang", "unlocated")
CLASSES = ("rejected", "pass", "warned-fail", "no-check", "slow-run", "order-dep") + KEPT_CLASSES

EDGE_INTS = [0, 1, -1, 2, 3, 7, 15, 17, 31, 33, 63, 127, 255, 256, 1023, 4096, 16384, 65536, 131072,
             2**31 - 1, 2**31, -2**31, 2**32, 2**33, 2**63 - 1, -2**63]
EDGE_FLOATS = ["0.0", "-0.0", "1e300", "-1e300", "1e-45", "65504.0", "70000.0", "float('inf')", "float('nan')"]
DTYPES = ["float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64", "uint32",
          "bool", "float8_e4m3", "int4"]
LOOPS = ["T.Parallel", "T.serial", "T.unroll", "T.vectorized", "T.Pipelined", "T.grid", "range"]
OPS = ["+", "-", "*", "//", "%", "/", "<", "<=", ">", ">=", "==", "!=", "<<", ">>", "&", "|", "^"]
TILE_OPS = ["T.copy", "T.atomic_add", "T.gemm", "T.fill", "T.clear", "T.reduce_max", "T.reduce_sum",
            "T.reduce_min", "T.reduce_absmax", "T.async_copy"]
ALLOCS = ["T.alloc_fragment", "T.alloc_shared", "T.alloc_local", "T.alloc_var"]

LOCATED_ERROR = re.compile(r"^[^\s:][^:\n]*:\d+:\d+: error: ", re.M)
LOCATED_WARNING = re.compile(r"^[^\s:][^:\n]*:\d+:\d+: warning: ", re.M)
ANY_ERROR = re.compile(r"(^|: )error: ", re.M)
SANITIZER = re.compile(r"ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error: |"
                       r"UndefinedBehaviorSanitizer|internal error|Assertion .* failed|Segmentation fault")
HOST_OOM = re.compile(r"out of memory allocating (input|output) ")
MISSING = re.compile(r"(scalar parameter|dynamic dim) '(\w+)' .*has no value; pass --(arg|dim) ")


# --------------------------------------------------------------- mutations
NUM = re.compile(r"(?<![\w.])(\d+\.\d*(?:e[-+]?\d+)?|\d+)(?![\w.])")
IDENT = re.compile(r"\b[A-Za-z_]\w*\b")
KEYWORDS = {"def", "for", "in", "if", "else", "elif", "with", "as", "return", "import", "from", "and", "or",
            "not", "True", "False", "None", "T", "tilelang", "lambda", "while", "pass", "is"}


def body_lines(lines):
    """Indices of the lines a mutation may touch: code, not comments or RUN lines."""
    return [i for i, l in enumerate(lines) if l.strip() and not l.lstrip().startswith("#")]


def mut_number(rng, lines, i):
    ms = list(NUM.finditer(lines[i]))
    if not ms:
        return None
    m = rng.choice(ms)
    text = m.group(1)
    if "." in text:
        new = rng.choice(EDGE_FLOATS)
    else:
        v = int(text)
        new = str(rng.choice(EDGE_INTS + [v * 2, v // 2, v + 1, v - 1, v * 8, v * 1000]))
    lines[i] = lines[i][:m.start()] + new + lines[i][m.end():]
    return f"number {text}->{new}"


def idents(line):
    return [m for m in IDENT.finditer(line) if m.group(0) not in KEYWORDS]


def mut_swap_names(rng, lines, i):
    ms = idents(lines[i])
    if len(ms) < 2:
        return None
    a, b = rng.sample(ms, 2)
    if a.start() > b.start():
        a, b = b, a
    if a.group(0) == b.group(0):
        return None
    l = lines[i]
    lines[i] = l[:a.start()] + b.group(0) + l[a.end():b.start()] + a.group(0) + l[b.end():]
    return f"swap {a.group(0)}<->{b.group(0)}"


def mut_replace_name(rng, lines, i):
    ms = idents(lines[i])
    pool = sorted({m.group(0) for l in lines for m in idents(l)})
    if not ms or not pool:
        return None
    m = rng.choice(ms)
    new = rng.choice(pool)
    lines[i] = lines[i][:m.start()] + new + lines[i][m.end():]
    return f"name {m.group(0)}->{new}"


def mut_drop(rng, lines, i):
    del lines[i]
    return f"drop line {i + 1}"


def mut_dup(rng, lines, i):
    lines.insert(i, lines[i])
    return f"duplicate line {i + 1}"


def mut_swap_lines(rng, lines, i):
    if i + 1 >= len(lines):
        return None
    lines[i], lines[i + 1] = lines[i + 1], lines[i]
    return f"swap lines {i + 1},{i + 2}"


def mut_words(table, what):
    def mut(rng, lines, i):
        hits = [(w, m) for w in table for m in re.finditer(re.escape(w) + r"\b", lines[i])]
        if not hits:
            return None
        w, m = rng.choice(hits)
        new = rng.choice([x for x in table if x != w])
        lines[i] = lines[i][:m.start()] + new + lines[i][m.end():]
        return f"{what} {w}->{new}"
    return mut


def mut_operator(rng, lines, i):
    ms = list(re.finditer(r"(?<=\s)(//|<<|>>|<=|>=|==|!=|[-+*/%<>&|^])(?=\s)", lines[i]))
    if not ms:
        return None
    m = rng.choice(ms)
    new = rng.choice([o for o in OPS if o != m.group(1)])
    lines[i] = lines[i][:m.start()] + new + lines[i][m.end():]
    return f"operator {m.group(1)}->{new}"


MUTATIONS = [(mut_number, 10), (mut_swap_names, 1), (mut_replace_name, 2), (mut_drop, 2), (mut_dup, 1),
             (mut_swap_lines, 1), (mut_words(DTYPES, "dtype"), 4), (mut_words(LOOPS, "loop"), 3),
             (mut_operator, 3), (mut_words(TILE_OPS, "tile op"), 1), (mut_words(ALLOCS, "alloc"), 1)]


def mutate(rng, text):
    lines = text.split("\n")
    done = []
    for _ in range(rng.choice([1, 1, 1, 1, 2, 3])):
        for _attempt in range(20):
            cand = body_lines(lines)
            if not cand:
                break
            fn = rng.choices([m for m, _ in MUTATIONS], weights=[w for _, w in MUTATIONS])[0]
            what = fn(rng, lines, rng.choice(cand))
            if what:
                done.append(what)
                break
    return "\n".join(lines), done


# -------------------------------------------------------------- running
tool_runs = [0]
nocheck_why = {}  # why accepted mutants got no check run (the summary's breakdown of no-check)


def no_check(why):
    nocheck_why[why] = nocheck_why.get(why, 0) + 1
    return "no-check"


# A sanitizer build's malloc returns NULL for an impossible size, as libc's
# does, so that tl-run's out-of-memory error is what gets tested.
ENV = dict(os.environ, TL_CACHE="0",
           ASAN_OPTIONS="allocator_may_return_null=1:" + os.environ.get("ASAN_OPTIONS", ""))


def run(cmd, budget):
    """(rc, output, seconds); rc None when the budget ran out."""
    tool_runs[0] += 1
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=budget, env=ENV)
        out = p.stdout.decode("utf-8", "replace")
        return p.returncode, out, time.monotonic() - t0
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode("utf-8", "replace")
        return None, out, time.monotonic() - t0


def diagnose(rc, out):
    """The class of one tool's result, or None when it exited cleanly."""
    if rc is None:
        return "hang"
    if rc < 0 or rc >= 128 or SANITIZER.search(out):
        return "crash"
    if rc == 0:
        return None
    if LOCATED_ERROR.search(out):
        return "rejected"
    return "unlocated"


def run_check(args, path, budget):
    """tl-run --check with --arg/--dim retries: (class, output)."""
    extra = []
    t0 = time.monotonic()
    for _ in range(4):  # the retries share the budget
        left = budget - (time.monotonic() - t0)
        rc, out, _ = run([args.tl_run, "--device=cpu", "--check"] + extra + [path], max(left, 0.5))
        m = MISSING.search(out)
        if rc is not None and rc != 0 and m:
            extra += [f"--{m.group(3)}", f"{m.group(2)}={'2' if m.group(3) == 'arg' else '100'}"]
            continue
        break
    c = diagnose(rc, out)
    if c == "hang":
        return "slow-run", out
    if c in ("crash",):
        return c, out
    if rc == 0 and "check: PASS" in out:
        return "pass", out
    if "check: FAIL" in out:
        return "check-fail", out
    if c == "rejected":
        return "rejected", out
    if MISSING.search(out):
        return no_check("a --arg/--dim still missing"), out
    if HOST_OOM.search(out):
        return no_check("inputs too large for the host"), out
    if rc == 2 or re.search(r"^<command line>: error:", out, re.M):
        return no_check("a tl-run usage error"), out
    return c or no_check("tl-run exited cleanly without a check result"), out


def classify(args, path, run_ok=True, run_budget=None):
    """(class, tl-opt output, tl-run output) of one kernel file."""
    rc, out, _ = run([args.tl_opt, "--emit=ptx", "-o", os.devnull, path], args.opt_budget)
    c = diagnose(rc, out)
    if c in ("hang", "crash", "unlocated"):
        return c, out, ""
    if c == "rejected":
        return "rejected", out, ""
    if not run_ok:
        return no_check("compile only: the seed's own check run is slow"), out, ""
    rc2, out2 = run_check(args, path, run_budget or args.run_budget)
    if rc2 == "check-fail" and (LOCATED_WARNING.search(out + out2) or LOCATED_ERROR.search(out2)):
        rc2 = "warned-fail"
    if rc2 == "check-fail":
        with open(path, encoding="utf-8", errors="replace") as f:
            if re.search(r"return_prev\s*=\s*True", f.read()):
                rc2 = "order-dep"
    return rc2, out, out2


def seeds(src):
    found = []
    for top in ("examples", "test"):
        for dp, dns, fns in os.walk(os.path.join(src, top)):
            dns[:] = [d for d in dns if d not in ("python", "GPU", "kept", "Inputs")]
            for f in sorted(fns):
                p = os.path.join(dp, f)
                if f.endswith(".py") and f != "lit.cfg.py":
                    with open(p, encoding="utf-8", errors="replace") as fh:
                        t = fh.read()
                    if "prim_func" in t:
                        found.append((os.path.relpath(p, src), t))
    return sorted(found)


def keep(args, cls, rel, muts, text, out):
    os.makedirs(args.keep, exist_ok=True)
    h = hashlib.sha1(text.encode()).hexdigest()[:12]
    name = f"{cls}-{h}.py"
    with open(os.path.join(args.keep, name), "w") as f:
        f.write(text)
    with open(os.path.join(args.keep, "INDEX"), "a") as f:
        f.write(f"{name}\t{cls}\t{rel}\t{'; '.join(muts)}\n")
    print(f"fuzz: KEPT {name} ({cls}) from {rel}: {'; '.join(muts)}", flush=True)
    print("\n".join(out.splitlines()[-12:]), flush=True)


def fuzz(args):
    rng = random.Random(args.seed)
    pool = seeds(args.src)
    counts = {c: 0 for c in CLASSES}
    tmp = tempfile.mkdtemp(prefix="tl-fuzz-")
    # each seed is run unmutated when first drawn: seeds that tl-opt rejects
    # (the negative tests) leave the pool; a seed whose own check run takes
    # over --seed-check-max seconds gives compile-only mutants
    runnable = {}
    t_start = time.monotonic()
    t_end = t_start + args.seconds
    runs = 0
    kept = 0
    while pool and ((args.runs and runs < args.runs) or (not args.runs and time.monotonic() < t_end)):
        k = rng.randrange(len(pool))
        rel, text = pool[k]
        path = os.path.join(tmp, os.path.basename(rel))
        if rel not in runnable:
            with open(path, "w") as f:
                f.write(text)
            saved = dict(nocheck_why)  # the seed's own run is not a mutant's
            c, _, _ = classify(args, path, True, args.seed_check_max)
            nocheck_why.clear()
            nocheck_why.update(saved)
            if c not in ("pass", "no-check", "slow-run"):
                del pool[k]
                continue
            runnable[rel] = c == "pass"
        mtext, muts = mutate(rng, text)
        if not muts or mtext == text:
            continue
        with open(path, "w") as f:
            f.write(mtext)
        cls, out, out2 = classify(args, path, runnable[rel])
        counts[cls] += 1
        runs += 1
        if cls in KEPT_CLASSES:
            kept += 1
            keep(args, cls, rel, muts, mtext, out + out2)
        if runs % 200 == 0:
            print(f"fuzz: {runs} mutants: " + ", ".join(f"{k} {v}" for k, v in counts.items() if v), flush=True)
    print(f"fuzz: {len(runnable)} seed files drawn, {len(pool)} kept in the pool, "
          f"{sum(runnable.values())} of them run under --check", flush=True)
    print(f"fuzz: {runs} mutants in {time.monotonic() - t_start:.0f} s ({tool_runs[0]} tool runs), kept {kept}: "
          + ", ".join(f"{k} {v}" for k, v in counts.items()), flush=True)
    slow = sorted(r for r, ok in runnable.items() if not ok)
    if slow:
        print(f"fuzz: compile-only seeds (own check run over {args.seed_check_max:g} s, or not runnable): "
              + " ".join(slow), flush=True)
    if nocheck_why:
        print("fuzz: no-check: " + ", ".join(f"{v} {k}" for k, v in sorted(nocheck_why.items())), flush=True)
    fatal = [c for c in args.fail_on.split(",") if c and counts.get(c)]
    if kept and not fatal:
        print(f"fuzz: kept {kept} input(s) in {args.keep} for triage (classes not in --fail-on={args.fail_on})",
              flush=True)
    return 1 if fatal else 0


def replay(args):
    bad = 0
    names = sorted(f for f in os.listdir(args.replay) if f.endswith(".py"))
    for f in names:
        cls, out, out2 = classify(args, os.path.join(args.replay, f))
        ok = cls not in KEPT_CLASSES
        print(f"replay: {f}: {cls}{'' if ok else '  <-- FAILS'}")
        if not ok:
            print("\n".join((out + out2).splitlines()[-12:]))
            bad += 1
    print(f"replay: {len(names)} kept inputs, {bad} still in a kept class")
    return 1 if bad else 0


def extents(args):
    """Every example's integer factory parameters at large values: PTX or an error within the budget."""
    bad = 0
    n = 0
    for rel, text in seeds(args.src):
        if not rel.startswith("examples"):
            continue
        m = re.search(r"def \w+\(([^)]*)\):", text)
        params = re.findall(r"(\w+)=(\d+)\b", m.group(1)) if m else []
        for name, _ in params:
            for big in (7, 4096, 16384, 131072, 2**31, 2**40):
                rc, out, secs = run([args.tl_opt, "--emit=ptx", "-o", os.devnull, f"-D{name}={big}",
                                     os.path.join(args.src, rel)], args.opt_budget)
                c = diagnose(rc, out) or "ptx"
                n += 1
                if c not in ("ptx", "rejected"):
                    bad += 1
                    print(f"extents: {rel} -D{name}={big}: {c} ({secs:.1f} s)")
                    print("\n".join(out.splitlines()[-6:]))
                elif secs > args.opt_budget / 2:
                    print(f"extents: {rel} -D{name}={big}: {c} in {secs:.1f} s")
    print(f"extents: {n} compiles, {bad} past the {args.opt_budget} s budget, crashed or unlocated")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--tl-opt", required=True)
    ap.add_argument("--tl-run")
    ap.add_argument("--src", default=os.path.normpath(os.path.join(here, "..", "..")))
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--runs", type=int, default=0, help="stop after N mutants (overrides --seconds)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", default=os.path.join(here, "kept"))
    ap.add_argument("--replay")
    ap.add_argument("--extents", action="store_true")
    ap.add_argument("--opt-budget", type=float, default=10.0)
    ap.add_argument("--fail-on", default=",".join(sorted(KEPT_CLASSES)),
                    help="comma-separated kept classes that make the exit status 1 (default: all kept classes)")
    ap.add_argument("--run-budget", type=float, default=10.0)
    ap.add_argument("--seed-check-max", type=float, default=3.0,
                    help="mutants of a seed whose own check run takes longer are compiled only")
    args = ap.parse_args()
    if args.extents:
        return extents(args)
    if not args.tl_run:
        ap.error("--tl-run is needed")
    return replay(args) if args.replay else fuzz(args)


if __name__ == "__main__":
    sys.exit(main())
