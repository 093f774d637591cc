#!/usr/bin/env python3
"""Runs TileLang's own example programs (examples/**/example_*.py of a tile-ai/tilelang checkout) unchanged,
each in its own process with a timeout, and writes one JSON line per file.

  scripts/run-tilelang-examples.py [--mode MODE] [--jobs N] [--timeout S] [--only REGEX] EXAMPLES_DIR OUT.jsonl

Modes (several may be given, comma-separated: they run one after the other over the same files):
  ours-run      `python -m tilelang_ptx FILE` in FILE's folder: the program as __main__ with `tilelang`
                meaning this project's package (the default)
  tilelang-run  `python FILE` through runpy with the real TileLang (it must be importable: PYTHONPATH)
  names         no execution: every `import tilelang...` / `from tilelang... import NAME` of each example
                and of the sibling modules it imports is resolved against this package; a file passes
                when every name exists (this checks the host-side surface on a machine without a GPU)
  scripts/run-tilelang-examples.py --table A.jsonl [B.jsonl ...]   (a Markdown table: a row per file, a column per run)
A JSON line: {"file", "mode", "result": "pass" | "fail" | "timeout", "kind" (for failures: missing-name,
not-provided, compile, check, needs-package, other), "error" (the located `file:line:col: error:` line of a compile error, else the exception's line of the
traceback, else its last line), "tail" (the last lines of standard error), "wall"; for a file that failed for
want of GPU memory beside the other jobs and was run again alone after them: "alone": true and
"beside_others", the first run's error}.
At the end, a table of counts per mode and kind on stdout.

On the GPU host: Python with torch, this package importable (PYTHONPATH=<bundle>/python with TL_LIBRARY=
<bundle>/lib/libtilelang.so.0, or the wheel installed), and for mode tilelang-run TileLang 0.1.15 on
PYTHONPATH (../peer's site tarball) with CUDA_HOME set.  Example:
  python3 scripts/run-tilelang-examples.py --mode ours-run,tilelang-run --jobs 6 /tmp/tl/examples out.jsonl
"""
import argparse
import ast
import collections
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

TILELANG_RUN = r'''
import runpy, sys
path = sys.argv[1]
sys.argv = [path] + sys.argv[2:]
sys.path.insert(0, __import__("os").path.dirname(path))
runpy.run_path(path, run_name="__main__")
try:
    import torch
    torch.cuda.synchronize()
except Exception:
    pass
'''


LOCATED = re.compile(r"^\S+\.py:\d+:\d+: error: ")
# a failure for want of GPU memory (PyTorch's, the driver's or cuBLAS's words), which a run beside --jobs - 1
# others can cause: such a file runs again alone after the pool, its record marked "alone"
OUT_OF_MEMORY = re.compile(r"out of memory|CUBLAS_STATUS_ALLOC_FAILED|CUDA_ERROR_OUT_OF_MEMORY", re.I)
RAISED = re.compile(r"^[\w.]*(Error|Exception|Exit)\b.*:|^[\w.]*(Error|Exception)$")


def classify(err):
    """The kind of a failure from the last line of its traceback."""
    if re.search(r"(ModuleNotFoundError|ImportError|AttributeError).*\b(tilelang|tvm)\b", err) and \
            "does not provide it" not in err:
        return "missing-name"
    if re.search(r"ModuleNotFoundError: No module named '(fla|flash_attn|triton|bitblas|einops|cuda)", err):
        return "needs-package"
    if "NotImplementedError" in err or "does not provide it" in err:
        return "not-provided"
    if re.search(r"\b(CompileError|CaptureError)\b", err):
        return "compile"
    if re.search(r"\bAssertionError\b", err):
        return "check"
    return "other"


def run_one(mode, path, timeout):
    t0 = time.time()
    folder = os.path.dirname(path)
    if mode == "ours-run":
        cmd = [sys.executable, "-m", "tilelang_ptx", path]
    elif mode == "tilelang-run":
        cmd = [sys.executable, "-c", TILELANG_RUN, path]
    else:
        raise ValueError(mode)
    rec = {"mode": mode}
    try:
        cp = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=timeout)
        if cp.returncode == 0:
            rec.update(result="pass")
        else:
            lines = [l for l in cp.stderr.strip().splitlines() if l.strip()]
            rec.update(result="fail", rc=cp.returncode, tail="\n".join(lines[-6:])[-1200:])
            located = [l for l in lines if LOCATED.search(l)]
            raised = [l for l in lines if RAISED.search(l)]
            if located:  # a compile error at its file:line:col (the caret line follows it)
                rec.update(kind="compile", error=located[-1][:400])
            else:
                err = (raised or lines or [f"exit status {cp.returncode}"])[-1][:400]
                rec.update(kind=classify(err), error=err)
    except subprocess.TimeoutExpired:
        rec.update(result="timeout", kind="timeout", error=f"no end within {timeout} s")
    rec["wall"] = round(time.time() - t0, 1)
    return rec


# ------------------------------------------------------------------ mode names
def _imports(tree):
    """(module, name or None, lineno) for each tilelang/tvm import of a module's syntax tree, and the
    other top-level module names it imports (candidates for sibling files)."""
    out, others = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in ("tilelang", "tvm"):
                    out.append((a.name, None, node.lineno))
                else:
                    others.add(a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] in ("tilelang", "tvm"):
                out += [(node.module, a.name, node.lineno) for a in node.names]
            else:
                others.add(node.module.split(".")[0])
    return out, others


def _attribute_chains(tree, aliases):
    """tilelang.X.Y attribute chains read in host code (outside @T.prim_func / @T.macro bodies, which
    the compiler reads), for the aliases bound to tilelang."""
    chains = []
    kernel_lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                "prim_func" in ast.unparse(d) or "macro" in ast.unparse(d) for d in node.decorator_list):
            kernel_lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and not isinstance(getattr(node, "ctx", None), ast.Store):
            parts = []
            n = node
            while isinstance(n, ast.Attribute):
                parts.append(n.attr)
                n = n.value
            if isinstance(n, ast.Name) and n.id in aliases and node.lineno not in kernel_lines:
                chains.append((aliases[n.id], list(reversed(parts)), node.lineno))
    return chains


def check_names(path):
    """Resolves the tilelang names of path and of the sibling modules it imports; returns a record."""
    import importlib
    from tilelang_ptx import _alias
    missing = []
    seen = set()
    todo = [path]
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            tree = ast.parse(open(p).read(), p)
        except SyntaxError as e:
            missing.append(f"{os.path.basename(p)}: syntax error {e}")
            continue
        imports, others = _imports(tree)
        for o in others:
            sib = os.path.join(os.path.dirname(path), o + ".py")
            if os.path.exists(sib):
                todo.append(sib)
        aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] in ("tilelang", "tvm"):
                        aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ("tilelang", "tvm"):
                for a in node.names:
                    aliases.setdefault(a.asname or a.name, f"{node.module}.{a.name}")
        where = os.path.basename(p)
        for mod, name, line in imports:
            try:
                m = _alias.import_ours(mod)
            except ImportError as e:
                missing.append(f"{where}:{line}: {e}")
                continue
            if name and name != "*" and not hasattr(m, name):
                try:
                    _alias.import_ours(f"{mod}.{name}")
                except ImportError:
                    missing.append(f"{where}:{line}: cannot import name '{name}' from '{mod}'")
        for base, parts, line in _attribute_chains(tree, aliases):
            if base.split(".")[-1] == "language" or base.endswith(".language") or base in ("T",):
                continue  # the T namespace: any name is inert; the compiler judges it
            try:
                obj = _alias.import_ours(base)
            except ImportError:
                try:
                    mod, _, attr = base.rpartition(".")
                    obj = getattr(_alias.import_ours(mod), attr)
                except (ImportError, AttributeError):
                    continue  # reported with its import
            for i, part in enumerate(parts):
                if getattr(obj, "__name__", "").endswith(".language"):
                    break
                try:
                    obj = getattr(obj, part)
                except AttributeError:
                    try:
                        obj = importlib.import_module(f"{obj.__name__}.{part}")
                    except (ImportError, AttributeError):
                        missing.append(f"{where}:{line}: {base}.{'.'.join(parts[:i + 1])}")
                        break
                if not hasattr(obj, "__name__") or not isinstance(obj, type(importlib)):
                    break  # a value: its own attributes are runtime data
    rec = {"mode": "names", "result": "pass" if not missing else "fail"}
    if missing:
        rec.update(kind="missing-name", error="; ".join(missing)[:600])
    return rec


def table(paths):
    """A Markdown table, one row per file, one column per JSON-lines file (mode): pass, or the failure's
    kind and error; then the counts."""
    cols, rows = [], collections.OrderedDict()
    for p in paths:
        recs = [json.loads(l) for l in open(p) if l.strip()]
        mode = recs[0]["mode"] if recs else os.path.basename(p)
        cols.append(mode)
        for r in recs:
            cell = "pass" if r["result"] == "pass" else f"{r.get('kind', r['result'])}: {r.get('error', '')[:120]}"
            rows.setdefault(r["file"], {})[mode] = cell.replace("|", "\\|")
    print("| file | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for f in sorted(rows):
        print(f"| {f} | " + " | ".join(rows[f].get(c, "") for c in cols) + " |")
    for c in cols:
        n = sum(1 for f in rows if rows[f].get(c) == "pass")
        print(f"\n{c}: {n}/{sum(1 for f in rows if c in rows[f])} pass", end="")
    print()


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--table":
        return table(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("examples")
    ap.add_argument("out")
    ap.add_argument("--mode", default="ours-run")
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    files = sorted(os.path.abspath(os.path.join(r, f)) for r, _, fs in os.walk(a.examples) for f in fs
                   if f.startswith("example_") and f.endswith(".py") and re.search(a.only, os.path.join(r, f)))
    if not files:
        sys.exit(f"run-tilelang-examples: no example_*.py under {a.examples}")
    counts = collections.OrderedDict()
    with open(a.out, "w") as out:
        for mode in a.mode.split(","):
            if mode == "names":
                def job(p):
                    return check_names(p)
            else:
                def job(p, mode=mode):
                    return run_one(mode, p, a.timeout)
            with ThreadPoolExecutor(1 if mode == "names" else a.jobs) as pool:
                recs = list(pool.map(job, files))
            for i, p in enumerate(files):  # out of GPU memory beside the other jobs: once more, alone
                if a.jobs > 1 and mode != "names" and OUT_OF_MEMORY.search(recs[i].get("tail", "") + recs[i].get("error", "")):
                    first = recs[i]
                    recs[i] = {**job(p), "alone": True, "beside_others": first.get("error", "")[:200]}
            for p, rec in zip(files, recs):
                rec = {"file": os.path.relpath(p, os.path.abspath(a.examples)), **rec}
                out.write(json.dumps(rec) + "\n")
                out.flush()
                key = (mode, rec["result"] if rec["result"] == "pass" else rec.get("kind", "other"))
                counts[key] = counts.get(key, 0) + 1
                print(f"{mode:12s} {rec['result']:7s} {rec.get('kind', ''):13s} {rec.get('wall', ''):>6} "
                      f"{rec['file']}  {rec.get('error', '')[:160]}", flush=True)
    print("\nmode         outcome        files")
    for (mode, what), n in counts.items():
        print(f"{mode:12s} {what:14s} {n}")


if __name__ == "__main__":
    main()
