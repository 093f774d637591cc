#!/usr/bin/env python3
"""Lists the names that TileLang's `import tilelang.language as T` exports
(T.__all__), read statically from a TileLang checkout's sources without
importing it (TileLang needs TVM and a GPU toolchain to import).

Usage: tilelang-exports.py TREE_OR_GIT_DIR [REV]
  With a git directory and REV (e.g. a35008a42), reads the files at REV
  with `git show`; otherwise reads TREE/tilelang/... from disk.
Prints the names, sorted, one a line.

It follows the facade as written at a35008a42: tilelang/language/__init__.py
re-exports tilelang/cuda/language, whose __all__ joins the common surface
(tilelang/language/common.py) and the CUDA modules' __all__ lists.  Each
__all__ is evaluated from its literal lists, tuples, sets and frozensets,
`*name` splices, `|` and `+`, list()/tuple()/sorted()/frozenset()/
dict.fromkeys(), and `from M import __all__ as X` or `from M import NAME`.
One part cannot be read here: tilelang/language/tir/common.py re-exports TVM's
TIR script parser (tvm.tirx.script.parser.__all__), which lives in the TVM
submodule; it is left out and a note saying so goes to stderr.
"""
import ast
import os
import subprocess
import sys

ROOT, REV = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else None)


def source(mod):
    rel = mod.replace(".", "/")
    for cand in (rel + ".py", rel + "/__init__.py"):
        if REV:
            r = subprocess.run(["git", "-C", ROOT, "show", f"{REV}:{cand}"], capture_output=True, text=True)
            if r.returncode == 0:
                return r.stdout, cand.endswith("__init__.py")
        elif os.path.exists(os.path.join(ROOT, cand)):
            with open(os.path.join(ROOT, cand)) as f:
                return f.read(), cand.endswith("__init__.py")
    return None, False


cache = {}


def resolve(mod, pkg_is_init, level, name):
    if level == 0:
        return name
    parts = mod.split(".")
    base = parts if pkg_is_init else parts[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def module_env(mod):
    if mod in cache:
        return cache[mod]
    cache[mod] = env = {}
    text, is_init = source(mod)
    if text is None:
        print(f"note: {mod} is not in the checkout; its exports are left out", file=sys.stderr)
        return env
    tree = ast.parse(text)
    for st in tree.body:
        if isinstance(st, ast.ImportFrom):
            src = resolve(mod, is_init, st.level, st.module)
            for a in st.names:
                if a.name == "__all__":
                    env[a.asname or a.name] = module_env(src).get("__all__", [])
        elif isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            try:
                env[st.targets[0].id] = ev(st.value, env)
            except (ValueError, KeyError):
                pass
    return env


def ev(x, env):
    if isinstance(x, ast.Constant) and isinstance(x.value, str):
        return [x.value]
    if isinstance(x, (ast.List, ast.Tuple, ast.Set)):
        out = []
        for e in x.elts:
            out += ev(e.value if isinstance(e, ast.Starred) else e, env)
        return out
    if isinstance(x, ast.Name):
        return list(env[x.id])
    if isinstance(x, ast.BinOp) and isinstance(x.op, (ast.BitOr, ast.Add)):
        return ev(x.left, env) + ev(x.right, env)
    if isinstance(x, ast.Call) and len(x.args) == 1:
        f = x.func
        fname = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        if fname in ("list", "tuple", "sorted", "frozenset", "set", "fromkeys"):
            return ev(x.args[0], env)
    if isinstance(x, ast.GeneratorExp):  # tir/common.py: TVM's parser names minus backend ones
        raise ValueError
    raise ValueError(ast.dump(x)[:80])


names = set(module_env("tilelang.cuda.language").get("__all__", []))
print("note: tilelang/language/tir/common.py re-exports TVM's TIR script parser "
      "(tvm.tirx.script.parser.__all__, in the TVM submodule); those names are not listed", file=sys.stderr)
for n in sorted(names):
    print(n)
