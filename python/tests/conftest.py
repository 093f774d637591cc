# pytest set-up of python/tests: the installed tilelang_ptx when there is one (the CI venv),
# else the package of this checkout (python/).
import os
import sys

# The tests never write the user's kernel cache (~/.cache/tilelang-ptx): off unless the caller set it.
os.environ.setdefault("TL_CACHE", "0")

try:
    import tilelang_ptx  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
