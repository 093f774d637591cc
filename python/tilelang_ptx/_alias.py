"""_alias.py -- `tilelang` (every `tilelang.*` module) and `tvm` meaning this package, for a TileLang file
run or imported unchanged.

Two mechanisms, both undone when the file is done with:
  * the file's own imports, at any time (also a function's `import tilelang.autotuner` long after
    load_file returned): the module executes with a __builtins__ whose __import__ maps `tilelang[.X]`
    to `tilelang_ptx[.X]` and `tvm[.X]` to `tilelang_ptx.tvm[.X]` (builtin_import_for);
  * other modules imported while the file executes (its sibling helper files): `aliased()` hides the
    process's own `tilelang*` / `tvm*` entries of sys.modules (a real TileLang already imported) and
    puts AliasFinder first on sys.meta_path; on exit it removes the aliases and restores the entries.
A name this package lacks is a ModuleNotFoundError naming it ("this project does not provide it")."""
import builtins
import contextlib
import importlib
import importlib.abc
import importlib.machinery
import sys
import threading

from ._unsupported import not_provided

PKG = __package__
_ROOTS = {"tilelang": PKG, "tvm": PKG + ".tvm"}


def ours(fullname):
    """The name of this package's module that `fullname` (tilelang.X / tvm.X) stands for, or None."""
    root, dot, rest = fullname.partition(".")
    base = _ROOTS.get(root)
    if base is None:
        return None
    return base + dot + rest


def import_ours(fullname):
    """Imports the module of this package that fullname stands for; ModuleNotFoundError naming fullname."""
    target = ours(fullname)
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as e:
        if e.name and (e.name == target or target.startswith(e.name + ".")):
            raise ModuleNotFoundError(f"No module named '{fullname}': " + not_provided(fullname),
                                      name=fullname) from None
        raise


def _import(name, globals=None, locals=None, fromlist=(), level=0):
    if level == 0 and ours(name) is not None:
        mod = import_ours(name)
        if fromlist:
            for item in fromlist:
                if item != "*" and not hasattr(mod, item):
                    try:
                        import_ours(f"{name}.{item}")
                    except ModuleNotFoundError:
                        raise ImportError(f"cannot import name '{item}' from '{name}': "
                                          + not_provided(f"{name}.{item}"), name=name) from None
            return mod
        return import_ours(name.partition(".")[0])
    return builtins.__import__(name, globals, locals, fromlist, level)


def builtins_for_file():
    """A __builtins__ dict for a TileLang file's module: Python's, with the aliasing __import__."""
    b = dict(builtins.__dict__)
    b["__import__"] = _import
    return b


class _ExistingModule(importlib.abc.Loader):
    def __init__(self, module):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        pass


class AliasFinder(importlib.abc.MetaPathFinder):
    """tilelang[.X] / tvm[.X] -> this package's module (the same object under both names)."""

    def find_spec(self, fullname, path=None, target=None):
        if ours(fullname) is None:
            return None
        mod = import_ours(fullname)
        return importlib.machinery.ModuleSpec(fullname, _ExistingModule(mod),
                                              is_package=hasattr(mod, "__path__"))


_lock = threading.RLock()


def _is_alias(name):
    return name.partition(".")[0] in _ROOTS


@contextlib.contextmanager
def aliased(hold=True):
    """While inside: `tilelang*` / `tvm*` imports by any module resolve to this package (the process's own
    entries hidden, restored on exit).  hold: keep the lock for the whole time (load_file: concurrent
    loads take turns, so that each restores what it found); run_file, which runs a whole program
    that may start threads of its own, holds it only to enter and to leave."""
    _lock.acquire()
    try:
        saved = {k: v for k, v in sys.modules.items() if _is_alias(k)}
        for k in saved:
            del sys.modules[k]
        finder = AliasFinder()
        sys.meta_path.insert(0, finder)
    finally:
        if not hold:
            _lock.release()
    try:
        yield
    finally:
        if not hold:
            _lock.acquire()
        try:
            sys.meta_path.remove(finder)
            for k in [k for k in sys.modules if _is_alias(k)]:
                del sys.modules[k]
            sys.modules.update(saved)
        finally:
            _lock.release()
