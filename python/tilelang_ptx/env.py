"""tilelang.env -- TileLang's environment settings that kernel files read: TILELANG_CACHE_DIR (this
project's kernel cache directory: $TL_CACHE_DIR, $XDG_CACHE_HOME/tilelang-ptx or ~/.cache/tilelang-ptx),
enable_cache / disable_cache / is_cache_enabled (the kernel cache on or off for this process: $TL_CACHE)."""
import os


def _cache_dir():
    d = os.environ.get("TL_CACHE_DIR")
    if d:
        return d
    x = os.environ.get("XDG_CACHE_HOME")
    return os.path.join(x, "tilelang-ptx") if x else os.path.join(os.path.expanduser("~"), ".cache", "tilelang-ptx")


def __getattr__(name):
    if name == "TILELANG_CACHE_DIR":
        return _cache_dir()
    from ._unsupported import not_provided
    raise AttributeError(not_provided(f"tilelang.env.{name}"))


def is_cache_enabled():
    return os.environ.get("TL_CACHE") != "0"


def disable_cache():
    """Turns the kernel cache (and the autotuner's) off for this process (TL_CACHE=0)."""
    os.environ["TL_CACHE"] = "0"


def enable_cache():
    os.environ.pop("TL_CACHE", None)


env = __import__("sys").modules[__name__]
