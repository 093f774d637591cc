"""files.py -- importing a TileLang kernel file written for TileLang itself (`import tilelang`,
`import tilelang.language as T`) unchanged: load_file(path) executes it as a module while the names
tilelang, tilelang.language and tilelang.testing stand for this package (only during the import; a real
TileLang already imported is left alone)."""
import importlib.util
import os
import re
import sys

_ALIASES = ("tilelang", "tilelang.language", "tilelang.testing")


def load_file(path, module_name=None):
    """Imports the TileLang file at `path` with `tilelang` meaning tilelang_ptx; returns the module
    (its @tilelang.jit factories are JITFactory objects).  The module is registered in sys.modules
    under module_name (default: "tilelang_file_<stem>")."""
    from . import language, testing
    pkg = sys.modules[__package__]
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    name = module_name or f"tilelang_file_{stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import TileLang file {path}")
    mod = importlib.util.module_from_spec(spec)
    saved = {k: sys.modules.get(k) for k in _ALIASES}
    ours = saved["tilelang"] is None
    if ours:
        sys.modules.update({"tilelang": pkg, "tilelang.language": language, "tilelang.testing": testing})
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        del sys.modules[name]
        raise
    finally:
        if ours:
            for k in _ALIASES:
                sys.modules.pop(k, None)
    return mod
