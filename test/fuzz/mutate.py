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
               missing --arg after the retries (--arg NAME=2, 1 for a bool;
               --dim NAME=100), inputs too large for the
               host's memory even at the small factory parameters below, or
               the seed's own run is too slow and it has none)
  slow-run     accepted; the CPU executor's run went past --run-budget
               (default 10 s: its time grows with the shapes a mutant
               enlarged), at the small factory parameters too
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

A seed whose own check run takes over --seed-check-max seconds (the examples
at their default sizes under ASan) has its mutants compiled at their own
sizes, then compiled and checked at the seed's small factory parameters
(-D NAME=VALUE for its integer size parameters, found automatically: see
small_params); a mutant of another seed that is slow-run, or too large for the
host, at its own sizes is checked again at them.  The summary says how the
checks at small parameters went (and lists the seeds that have none).
A mutant still slow-run, or too large for the host, is checked once more
with the numbers its mutations enlarged shrunk to twice the seed's value plus
the residue (seeds with literal shapes have no factory parameters; see
shrink_numbers); each mutant left unchecked is listed with its mutations.

Kept inputs are written to --keep DIR (default: test/fuzz/kept) as
CLASS-HASH.py, with a line in DIR/INDEX (class, seed file, mutations).
`--replay DIR` runs every kept input again and fails when one is still in a
kept class (test/Lower/fuzz_kept.test runs it under lit).

  usage: mutate.py --tl-opt PATH --tl-run PATH [--seconds N | --runs N]
                   [--seed N] [--keep DIR] [--src ROOT] [--only REGEX] [--small]
         mutate.py --tl-opt PATH --tl-run PATH --replay DIR
         mutate.py --tl-opt PATH --extents     (every example's integer factory
                   parameters set to large values: PTX or an error in budget)
Exit status: 0 when nothing was kept (replay: every input is in an allowed
class), 1 otherwise.
"""
import argparse
import ast
import hashlib
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter

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


OUT_IDX = ["-1", "-2", "-3", "0", "1", "2", "7", "-9", "[0]", "[-2]", "[0, 1]", "[1, 1]", "[-1, -1]", "[]",
           "[0, -1]", "None", "(0,)", "1.5", "'C'"]
JIT = re.compile(r"@(?:tilelang|tl|T)\.jit\b(\()?")


def mut_out_idx(rng, lines, i):
    """out_idx changed or added on a @tilelang.jit line: a strided, dynamic or
    aliased parameter becomes an output the runtime must allocate (or refuse).
    The line is the file's jit line, wherever i points."""
    jits = [k for k, l in enumerate(lines) if "out_idx" in l or JIT.search(l)]
    if not jits:
        return None
    i = rng.choice(jits)
    new = rng.choice(OUT_IDX)
    m = re.search(r"out_idx\s*=\s*(\[[^\]]*\]|\([^)]*\)|-?\d+|None)", lines[i])
    if m:
        lines[i] = lines[i][:m.start(1)] + new + lines[i][m.end(1):]
        return f"out_idx {m.group(1)}->{new}"
    j = JIT.search(lines[i])
    if not j:
        return None
    if j.group(1):
        lines[i] = lines[i][:j.end()] + f"out_idx={new}, " + lines[i][j.end():]
    else:
        lines[i] = lines[i][:j.end()] + f"(out_idx={new})" + lines[i][j.end():]
    return f"out_idx added {new}"


MUTATIONS = [(mut_number, 10), (mut_out_idx, 2), (mut_swap_names, 1), (mut_replace_name, 2), (mut_drop, 2), (mut_dup, 1),
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
small_stats = Counter()  # how the checks at small factory parameters went (the summary)
shrink_stats = Counter()  # how the checks with shrunk mutated numbers went (the summary)
long_stats = Counter()  # how the checks with --long-budget went (the summary)
last_small = [None]  # the class check_small gave last
last_why = [""]  # why the last no-check result got no check (the summary's breakdown of no-check)


def no_check(why):
    last_why[0] = why
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


def run_check(args, path, budget, defines=()):
    """tl-run --check (with -D NAME=VALUE for each of defines) with --arg/--dim retries: (class, output)."""
    extra = [f"-D{n}={v}" for n, v in defines]
    t0 = time.monotonic()
    for _ in range(4):  # the retries share the budget
        left = budget - (time.monotonic() - t0)
        rc, out, _ = run([args.tl_run, "--device=cpu", "--check"] + extra + [path], max(left, 0.5))
        m = MISSING.search(out)
        if rc is not None and rc != 0 and m:
            val = "100" if m.group(3) == "dim" else "1" if "' (bool) " in m.group(0) else "2"
            extra += [f"--{m.group(3)}", f"{m.group(2)}={val}"]
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


def compile_ptx(args, path, defines=()):
    """tl-opt --emit=ptx: (class or None when it compiled, output)."""
    rc, out, _ = run([args.tl_opt, "--emit=ptx", "-o", os.devnull] + [f"-D{n}={v}" for n, v in defines] + [path],
                     args.opt_budget)
    return diagnose(rc, out), out


def classify(args, path, run_ok=True, run_budget=None, small=None):
    """(class, tl-opt output, tl-run output) of one kernel file.

    small: the seed's small factory parameters (see small_params), or None:
    when given, the file is compiled at its own sizes, then compiled and
    checked with them (check_small); with run_ok False and no small
    parameters the file is compiled only."""
    c, out = compile_ptx(args, path)
    if c in ("hang", "crash", "unlocated"):
        return c, out, ""
    if c == "rejected":
        return "rejected", out, ""
    if small is not None:
        return check_small(args, path, small, out)
    if not run_ok:
        return no_check("compile only: the seed's own check run is slow, no small factory parameters"), out, ""
    return judge_check(args, path, out, *run_check(args, path, run_budget or args.run_budget))


def judge_check(args, path, out, rc2, out2):
    """The class of an accepted file from its check result: a failure after a
    located warning or run-time error is warned-fail; (class, outputs)."""
    if rc2 == "check-fail" and (LOCATED_WARNING.search(out + out2) or LOCATED_ERROR.search(out2)):
        rc2 = "warned-fail"
    if rc2 == "check-fail":
        with open(path, encoding="utf-8", errors="replace") as f:
            if re.search(r"return_prev\s*=\s*True", f.read()):
                rc2 = "order-dep"
    return rc2, out, out2


# ------------------------------------------------- small factory parameters
# A seed whose own check run is slow (the examples at their default sizes
# under ASan), and the mutants of any seed that ran past the run budget or
# past the host's memory, are checked at small values of the seed's integer
# size parameters, passed as -D NAME=VALUE to tl-opt and tl-run.  A size
# parameter is an integer factory parameter or module constant of at least
# 4 whose name is not that of a tiling choice (BLOCKLIKE).  Its floor is two
# tiles (twice block_NAME's default, or twice `block`'s where the file has no
# block_NAME; one tile where two are over the default), else 16 (2 for a
# default under 32), also where the block is larger (it tiles another size);
# its values are the default's halvings.  The sizes are first tried all at their floors; then
# all but one (the smallest halving of that one that passes, by bisection);
# then each halved toward its floor on its own, the largest first.  The
# seed passes when its check says PASS within the run budget with every output
# written (a nonzero, finite abs_sum: sizes that run no block leave them unwritten).
FACTORY_INT = re.compile(r"\b(\w+)\s*=\s*(\d+)\s*(?=[,)]|$)")
MODULE_INT = re.compile(r"^([A-Za-z_]\w*)\s*=\s*([0-9 +*<>()-]+?)\s*(?:#.*)?$", re.M)
BLOCKLIKE = re.compile(r"block|thread|stage|warp|split|num_|pack|group|vec|tile", re.I)
OUTPUT = re.compile(r"^output \S+ shape=\S+ dtype=\S+ sum=\S+ abs_sum=(\S+)$", re.M)
UNKNOWN_DEFINE = re.compile(r"^<command line>: error: -D (\w+): no factory parameter named", re.M)


def int_value(expr):
    """The value of an integer literal expression (digits, + - * << >> and parentheses), or None."""
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        return None
    ok = all(isinstance(n, (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.operator, ast.unaryop))
             for n in ast.walk(tree))
    if not ok or any(isinstance(n, ast.Constant) and type(n.value) is not int for n in ast.walk(tree)):
        return None
    try:
        v = eval(compile(tree, "<expr>", "eval"), {"__builtins__": {}})  # literals and operators only
    except (ArithmeticError, ValueError):
        return None
    return v if isinstance(v, int) and abs(v) < 2**63 else None


def factory_ints(text):
    """{name: value} of the file's integer module constants and the integer
    defaults of its factory functions' parameters (first definition wins)."""
    found = {}
    for m in re.finditer(r"^\s*def \w+\(([^)]*)\)", text, re.M):
        for n, v in FACTORY_INT.findall(m.group(1)):
            found.setdefault(n, int(v))
    for n, e in MODULE_INT.findall(text):
        v = int_value(e)
        if v is not None:
            found.setdefault(n, v)
    return found


def outputs_written(out):
    """Every output line has a nonzero, finite abs_sum."""
    sums = OUTPUT.findall(out)
    try:
        return bool(sums) and all(0 < abs(float(v)) < float("inf") for v in sums)
    except ValueError:
        return False


def seed_passes(args, path, defines):
    c, out = run_check(args, path, args.run_budget, defines)
    return c == "pass" and outputs_written(out)


def small_params(args, path, text):
    """The seed's small factory parameters [(name, value)], or None when it
    passes at no smaller size (see the comment above)."""
    ints = factory_ints(text)
    floor = {}
    for n, v in ints.items():
        if v >= 4 and not BLOCKLIKE.search(n):
            b = ints.get("block_" + n, ints.get("block", v + 1))  # a block larger than v tiles something else
            floor[n] = 2 * b if 2 * b < v else b if b <= v else 16 if v >= 32 else 2

    def halvings(v, f):  # the defaults' divisibility is kept
        return [v >> k for k in range(1, 64) if v >> k >= f and (v >> k) << k == v][::-1]
    vals = {n: halvings(ints[n], f) for n, f in floor.items()}
    vals = {n: vs for n, vs in vals.items() if vs}
    if not vals:
        return None

    def bisect(chosen, n):
        """chosen with n at its smallest halving that passes (vals[n][hi], the default when hi is the end)."""
        vs = vals[n]
        lo, hi = 0, len(vs)
        while lo < hi:
            mid = lo if lo == 0 and hi == len(vs) else (lo + hi) // 2
            if seed_passes(args, path, sorted({**chosen, n: vs[mid]}.items())):
                hi = mid
            else:
                lo = mid + 1
        return {**chosen, n: vs[hi]} if hi < len(vs) else chosen
    order = sorted(vals, key=lambda n: -ints[n])
    at_floor = {n: vs[0] for n, vs in vals.items()}
    if seed_passes(args, path, sorted(at_floor.items())):
        return sorted(at_floor.items())
    # one size that cannot go to its floor (a tile it must fill): the others at theirs
    for n in order:
        rest = {m: v for m, v in at_floor.items() if m != n}
        if rest and seed_passes(args, path, sorted(rest.items())):
            return sorted(bisect(rest, n).items())
    chosen = {}
    for n in order:
        chosen = bisect(chosen, n)
    return sorted(chosen.items()) if chosen else None


def with_defines(args, path, small, fn):
    """fn(defines) with the small parameters the file still declares at the
    seed's default; a -D the tools refuse as no factory parameter (a mutation
    renamed it) is dropped and fn run again, so that it never becomes a class."""
    defs = list(small)
    while True:
        res = fn(defs)
        outs = res[1] if isinstance(res, tuple) else ""
        bad = set(UNKNOWN_DEFINE.findall(outs))
        if not bad or not defs:
            return res, defs
        defs = [(n, v) for n, v in defs if n not in bad]


def check_small(args, path, small, out):
    res = check_small_once(args, path, small, out)
    small_stats[f"{res[0]} at the small parameters"] += 1
    last_small[0] = res[0]
    return res


def check_small_once(args, path, small, out):
    """Compile and check an accepted file at the seed's small parameters
    small = (seed defaults, [(name, value)]): first keeping the file's own
    value of a parameter a mutation changed, then, when that run is slow or
    too large for the host, with every small value."""
    seed_ints, params = small
    with open(path, encoding="utf-8", errors="replace") as f:
        ints = factory_ints(f.read())
    kept = [(n, v) for n, v in params if n in ints and ints[n] == seed_ints.get(n)]
    full = [(n, v) for n, v in params if n in ints]
    # a size without small values (batch = 1) that a mutation enlarged (a
    # swapped default): the seed's value, in the retry with every small value
    names = {n for n, _ in params}
    full += sorted((n, seed_ints[n]) for n, v in ints.items()
                   if n not in names and n in seed_ints and v > seed_ints[n] and not BLOCKLIKE.search(n))
    tries = [kept] if kept == full else [kept, full]
    for i, defs in enumerate(tries):
        (c, out1), defs = with_defines(args, path, defs, lambda d: compile_ptx(args, path, d))
        if c in ("hang", "crash", "unlocated"):
            return c, out + out1, ""
        if c == "rejected":
            return "rejected", out + out1, ""
        (res, out2), defs = with_defines(args, path, defs, lambda d: run_check(args, path, args.run_budget, d))
        cls = judge_check(args, path, out + out1, res, out2)
        if i + 1 < len(tries) and (cls[0] == "slow-run" or HOST_OOM.search(out2)):
            continue
        if i:
            small_stats["checked with a mutated size default overridden"] += 1
        return cls


# ---------------------------------------------------- shrunk mutated numbers
# A mutant that is slow-run, or too large for the host, after the checks
# above (a seed with literal shapes has no factory parameters to shrink, and
# a mutation may enlarge a literal that is none: a loop count, an
# allocation) is checked once more with each number its mutations enlarged
# in magnitude (number A->B, |A| > 0; a negative B keeps its sign, which the
# text writes outside the digits) replaced by B' = A * 2 + B % A on the
# magnitudes, where that is less than |B|, on the lines the mutations
# changed: B' keeps B's residue modulo the seed's value (so its divisibility
# by every tile that divides A) and stays over A.  That file is
# what runs --check; its result is the mutant's class when it ran the check
# (pass, warned-fail, rejected by a located run-time error as at the small
# factory parameters, a kept class: then the shrunk file is kept); when tl-opt
# rejects it (the shrink broke the kernel), or it is slow or too large again,
# the mutant keeps its unchecked class.
MUT_NUMBER = re.compile(r"^number (-?\d+)->(-?\d+)$")


def shrink_numbers(seed_text, mtext, muts):
    """The mutant with its enlarged numbers shrunk (see above) and the list of
    replacements ["B->B'"], or (None, []) when no mutation enlarged one."""
    origin = {}  # a number's magnitude in the seed, through chained mutations (4->16384, then 16384->256)
    for what in muts:
        m = MUT_NUMBER.match(what)
        if m:
            a, b = abs(int(m.group(1))), abs(int(m.group(2)))
            origin[b] = origin.get(a, a)
    pairs = [(b, a * 2 + b % a) for b, a in origin.items() if a > 0 and a * 2 + b % a < b]
    if not pairs:
        return None, []
    seed_lines = set(seed_text.split("\n"))
    lines = mtext.split("\n")
    done = []
    for b, b2 in pairs:
        hit = False
        for i, l in enumerate(lines):
            if l in seed_lines or not l.strip() or l.lstrip().startswith("#"):
                continue
            new = NUM.sub(lambda m: str(b2) if m.group(1) == str(b) else m.group(1), l)
            if new != l:
                lines[i] = new
                hit = True
        if hit:
            done.append(f"{b}->{b2}")
    return ("\n".join(lines), done) if done else (None, [])


def check_shrunk(args, path, seed_text, mtext, muts, small):
    """Check the mutant mtext (slow or too large for the host) again with its
    enlarged numbers shrunk, written to path: (class, tl-opt output, tl-run
    output, the shrunk text, muts + the replacements) when that ran the check,
    else (None, a note on why the mutant stays unchecked)."""
    stext, shrunk = shrink_numbers(seed_text, mtext, muts)
    if not stext:
        return None, "; no enlarged number to shrink"
    with open(path, "w") as f:
        f.write(stext)
    c, out, out2 = classify(args, path, True, None, small)
    if c == "rejected" and not LOCATED_ERROR.search(out2):
        c = "rejected by tl-opt"  # the shrink broke the kernel: no check ran
    shrink_stats[c] += 1
    if c in ("rejected by tl-opt", "no-check", "slow-run"):
        return None, f"; with {', '.join(shrunk)}: {c}"
    return c, out, out2, stext, muts + ["shrunk " + ", ".join(shrunk)]


# A mutant still slow-run after all of the above (no number to shrink: a
# swapped name, a changed operator or loop kind made the run long; or a
# shrunk one still just over the run budget) gets one more check with
# --long-budget seconds (default 0: none), with its enlarged numbers shrunk
# where it has some, at the seed's small parameters where it has them, and
# takes that check's class; long_stats counts the outcomes (the summary
# prints them).
def long_check(args, path, mtext, mode, small_of_rel, before):
    """The mutant mtext checked with the run budget raised to --long-budget:
    (class, tl-opt output, tl-run output, note), or before (the same four)
    when it is still slow."""
    with open(path, "w") as f:
        f.write(mtext)
    small = mode[1] if isinstance(mode, tuple) else small_of_rel
    saved = args.run_budget
    args.run_budget = args.long_budget
    try:
        c, out, out2 = classify(args, path, True, None, small)
    finally:
        args.run_budget = saved
    long_stats[c] += 1
    if c == "slow-run":
        return before[0], before[1], before[2], before[3] + f"; slow with --long-budget={args.long_budget:g} too"
    if c == "rejected":
        first = LOCATED_ERROR.search(out + out2)
        print(f"fuzz: rejected by the long check: {path}: "
              f"{(out + out2)[first.start():].split(chr(10))[0] if first else ''}", flush=True)
    return c, out, out2, ""


def unchecked_by_size(cls, out2):
    """The class says the check did not run for the sizes: slow, or too large for the host."""
    return cls == "slow-run" or (cls == "no-check" and bool(HOST_OOM.search(out2)))


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
    # the GPU kernels with strided or dynamic parameters: seeds of the out_idx mutation
    gpu = os.path.join(src, "test", "GPU", "kernels")
    for f in sorted(os.listdir(gpu)) if os.path.isdir(gpu) else ():
        p = os.path.join(gpu, f)
        if f.endswith(".py"):
            with open(p, encoding="utf-8", errors="replace") as fh:
                t = fh.read()
            if "prim_func" in t and re.search(r"StridedTensor|T\.symbolic|T\.dynamic", t):
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


def seed_mode(args, rel, text, path):
    """How the seed's mutants are checked: "run" (at the file's own sizes),
    ("small", (defaults, [(name, value)])) or "compile" (no check); None
    when the seed itself is rejected (it leaves the pool)."""
    with open(path, "w") as f:
        f.write(text)
    c, _, _ = classify(args, path, True, args.seed_check_max)
    if c == "pass" and not args.small:
        return "run"
    if c not in ("pass", "no-check", "slow-run"):
        return None
    small = small_params(args, path, text)
    if small:
        print(f"fuzz: {rel}: own check {c}, mutants checked at " + " ".join(f"-D{n}={v}" for n, v in small),
              flush=True)
        return ("small", (factory_ints(text), small))
    return "run" if c == "pass" else "compile"


def fuzz(args):
    rng = random.Random(args.seed)
    pool = [(r, t) for r, t in seeds(args.src) if re.search(args.only, r)]
    counts = {c: 0 for c in CLASSES}
    nocheck_why = Counter()
    slow_why = Counter()
    tmp = tempfile.mkdtemp(prefix="tl-fuzz-")
    # each seed is run unmutated when first drawn: seeds that tl-opt rejects
    # (the negative tests) leave the pool; a seed whose own check run takes
    # over --seed-check-max seconds has its mutants checked at its small
    # factory parameters, or compiled only when it has none
    mode = {}
    small_of = {}  # the small parameters of the seeds checked at their own sizes, found when first needed
    t_start = time.monotonic()
    t_end = t_start + args.seconds
    runs = 0
    kept = 0
    while pool and ((args.runs and runs < args.runs) or (not args.runs and time.monotonic() < t_end)):
        k = rng.randrange(len(pool))
        rel, text = pool[k]
        path = os.path.join(tmp, os.path.basename(rel))
        if rel not in mode:
            mode[rel] = seed_mode(args, rel, text, path)
        if mode[rel] is None:
            del pool[k]
            continue
        mtext, muts = mutate(rng, text)
        if not muts or mtext == text:
            continue
        with open(path, "w") as f:
            f.write(mtext)
        m = mode[rel]
        last_small[0] = None
        cls, out, out2 = classify(args, path, m == "run", None, m[1] if isinstance(m, tuple) else None)
        if m == "run" and (cls == "slow-run" or (cls == "no-check" and HOST_OOM.search(out2))):
            # a mutant that enlarged the sizes: again at the seed's small parameters
            if rel not in small_of:
                with open(path, "w") as f:
                    f.write(text)
                sp = small_params(args, path, text)
                small_of[rel] = (factory_ints(text), sp) if sp else None
                print(f"fuzz: {rel}: small parameters for slow mutants: "
                      + (" ".join(f"-D{n}={v}" for n, v in sp) if sp else "none"), flush=True)
                with open(path, "w") as f:
                    f.write(mtext)
            if small_of[rel]:
                small_stats[f"{cls} at the own sizes, checked again"] += 1
                cls, out, out2 = check_small(args, path, small_of[rel], out)
        note = ""
        if unchecked_by_size(cls, out2):
            small = m[1] if isinstance(m, tuple) else small_of.get(rel)
            res = check_shrunk(args, path, text, mtext, muts, small)
            if res[0] is None:
                note = res[1]
            else:
                cls, out, out2, mtext, muts = res
                if cls == "rejected":
                    first = LOCATED_ERROR.search(out2)
                    print(f"fuzz: accepted at its own sizes, rejected with its enlarged numbers shrunk: {rel}: "
                          f"{'; '.join(muts)}: {out2[first.start():].split(chr(10))[0]}", flush=True)
                    last_small[0] = None
        if cls == "slow-run" and args.long_budget > args.run_budget:
            stext, shrunk = shrink_numbers(text, mtext, muts)
            if stext:  # the long check runs the smaller file
                mtext, muts = stext, muts + ["shrunk " + ", ".join(shrunk)]
            cls, out, out2, note = long_check(args, path, mtext, m, small_of.get(rel), (cls, out, out2, note))
        counts[cls] += 1
        if cls in ("no-check", "slow-run"):
            print(f"fuzz: unchecked ({cls}{': ' + last_why[0] if cls == 'no-check' else ''}{note}): "
                  f"{rel}: {'; '.join(muts)}", flush=True)
        if cls == "no-check":
            nocheck_why[last_why[0]] += 1
        at_small = isinstance(m, tuple) or bool(small_of.get(rel))
        if cls == "slow-run":
            slow_why["at the small factory parameters" if at_small else "the seed has no small factory parameters"] += 1
        if cls == "warned-fail":
            diag = LOCATED_WARNING.search(out + out2) or LOCATED_ERROR.search(out2)
            line = (out + out2)[diag.start():].split("\n")[0] if diag else ""
            print(f"fuzz: warned-fail: {rel}: {'; '.join(muts)}: {line}", flush=True)
        if cls == "rejected" and last_small[0] == "rejected":
            first = LOCATED_ERROR.search(out + out2)
            line = (out + out2)[first.start():].split("\n")[0] if first else ""
            print(f"fuzz: accepted at its own sizes, rejected at the small parameters: {rel}: "
                  f"{'; '.join(muts)}: {line}", flush=True)
        runs += 1
        if cls in KEPT_CLASSES:
            kept += 1
            keep(args, cls, rel, muts, mtext, out + out2)
        if runs % 200 == 0:
            print(f"fuzz: {runs} mutants: " + ", ".join(f"{k} {v}" for k, v in counts.items() if v), flush=True)
    runnable = {r: m for r, m in mode.items() if m is not None}
    print(f"fuzz: {len(runnable)} seed files drawn, {len(pool)} kept in the pool, "
          f"{sum(m == 'run' for m in runnable.values())} of them checked at their own sizes, "
          f"{sum(isinstance(m, tuple) for m in runnable.values())} at small factory parameters", flush=True)
    print(f"fuzz: {runs} mutants in {time.monotonic() - t_start:.0f} s ({tool_runs[0]} tool runs), kept {kept}: "
          + ", ".join(f"{k} {v}" for k, v in counts.items()), flush=True)
    slow = sorted(r for r, m in runnable.items() if m == "compile")
    if slow:
        print(f"fuzz: compile-only seeds (own check run over {args.seed_check_max:g} s or not runnable, "
              "no small factory parameters): " + " ".join(slow), flush=True)
    if small_stats:
        print("fuzz: small factory parameters: " + ", ".join(f"{v} {k}" for k, v in sorted(small_stats.items())),
              flush=True)
    if long_stats:
        print(f"fuzz: slow-run, checked again with --long-budget={args.long_budget:g}: "
              + ", ".join(f"{v} {k}" for k, v in sorted(long_stats.items())), flush=True)
    if shrink_stats:
        print("fuzz: slow or too large, checked again with the enlarged numbers shrunk: "
              + ", ".join(f"{v} {k}" for k, v in sorted(shrink_stats.items())), flush=True)
    if nocheck_why:
        print("fuzz: no-check: " + ", ".join(f"{v} {k}" for k, v in sorted(nocheck_why.items())), flush=True)
    if slow_why:
        print("fuzz: slow-run: " + ", ".join(f"{v} {k}" for k, v in sorted(slow_why.items())), flush=True)
    fatal = [c for c in args.fail_on.split(",") if c and counts.get(c)]
    if kept and not fatal:
        print(f"fuzz: kept {kept} input(s) in {args.keep} for triage (classes not in --fail-on={args.fail_on})",
              flush=True)
    return 1 if fatal else 0


def replay(args):
    # a kept input's class should not depend on the machine's load (ctest runs lit beside other tests under
    # ASan): the replay gives each check at least 60 s before calling it slow-run
    args.run_budget = max(args.run_budget, 60.0)
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
    ap.add_argument("--small", action="store_true",
                    help="check the mutants of every seed that has small factory parameters at those")
    ap.add_argument("--only", default="", help="mutate only the seed files whose path matches this regex")
    ap.add_argument("--keep", default=os.path.join(here, "kept"))
    ap.add_argument("--replay")
    ap.add_argument("--extents", action="store_true")
    ap.add_argument("--opt-budget", type=float, default=10.0)
    ap.add_argument("--fail-on", default=",".join(sorted(KEPT_CLASSES)),
                    help="comma-separated kept classes that make the exit status 1 (default: all kept classes)")
    ap.add_argument("--run-budget", type=float, default=10.0)
    ap.add_argument("--long-budget", type=float, default=0.0,
                    help="seconds of one last check of a mutant still slow-run (0: none)")
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
