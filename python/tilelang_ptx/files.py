"""files.py -- a TileLang file written for TileLang itself (`import tilelang`, `import tilelang.language as T`,
`from tilelang.autotuner import *`), imported or run unchanged with this package as its `tilelang`:

  load_file(path)            imports it as a module; its @tilelang.jit factories are this package's
  run_file(path, argv)       runs it as __main__ (`python -m tilelang_ptx FILE ARGS...`)

Both bind the file to this package always, also in a process that imported the real TileLang first,
and leave the process's own `tilelang` / `tvm` modules as they found them (_alias.py): the file's
imports, also those its functions make later, resolve to this package; sibling modules it imports
while it executes do too."""
import importlib.util
import os
import re
import runpy
import sys

from . import _alias


def load_file(path, module_name=None):
    """Imports the TileLang file at `path` with `tilelang` meaning tilelang_ptx; returns the module.  Its
    folder is on sys.path while it executes (sibling imports).  The module is registered in sys.modules
    under module_name (default: "tilelang_file_<stem>")."""
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    name = module_name or f"tilelang_file_{stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import TileLang file {path}")
    mod = importlib.util.module_from_spec(spec)
    mod.__builtins__ = _alias.builtins_for_file()
    sys.modules[name] = mod
    folder = os.path.dirname(os.path.abspath(path))
    added = folder not in sys.path
    if added:  # its sibling imports work while it executes, as for a script
        sys.path.insert(0, folder)
    try:
        with _alias.aliased():
            spec.loader.exec_module(mod)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    finally:
        if added and folder in sys.path:
            sys.path.remove(folder)
    return mod


def run_file(path, argv=()):
    """Runs the TileLang file at `path` as __main__, as `python path ARGS...` would under TileLang:
    sys.argv = [path, *argv], the file's folder first on sys.path (its sibling imports work), and
    `tilelang` meaning this package.  Returns the file's globals; sys.argv and sys.path are restored."""
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"tilelang_ptx.run_file: no file {path}")
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [path, *argv]
    sys.path.insert(0, os.path.dirname(path))
    try:
        with _alias.aliased(hold=False):
            return runpy.run_path(path, init_globals={"__builtins__": _alias.builtins_for_file()},
                                  run_name="__main__")
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path
