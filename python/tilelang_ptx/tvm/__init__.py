"""tilelang.tvm / `tvm` -- the parts of TVM's Python namespace that TileLang files touch on the host:
DataType (dtype strings with .bits and .lanes), target.Target (a target description: kind, arch), the
testing.requires_package decorator, and tirx (inert: kernel bodies are compiled, never run by Python).
Anything else raises AttributeError naming it: this project has no TVM."""
import importlib
import re

from .. import language as _lang

_BITS_DEFAULT = {"bool": 1, "handle": 64, "float": 32, "int": 32, "uint": 32, "half": 16, "double": 64}
_ALIASES = {"half": "float16", "float": "float32", "double": "float64"}


class DataType:
    """A TVM dtype: DataType("float16"), DataType("int8x4"); str() gives the name back; .bits, .lanes,
    .type_code-free; compares equal to its name."""

    _RE = re.compile(r"^([a-z]+?)(\d*)(_e\d+m\d+[a-z]*|_e\d+m\d+)?(?:x(\d+))?$")

    def __init__(self, name):
        if isinstance(name, DataType):
            name = name.dtype_str
        s = _ALIASES.get(str(name), str(name))
        m = self._RE.match(s)
        if not m:
            raise ValueError(f"DataType: cannot parse dtype {name!r}")
        base, bits, fmt, lanes = m.groups()
        self.lanes = int(lanes) if lanes else 1
        self.bits = int(bits) if bits else _BITS_DEFAULT.get(base, 0)
        if not self.bits:
            raise ValueError(f"DataType: cannot parse dtype {name!r}")
        self.type = base
        self.dtype_str = s

    def __str__(self):
        return self.dtype_str

    def __repr__(self):
        return f"DataType({self.dtype_str!r})"

    def __eq__(self, other):
        if isinstance(other, DataType):
            return self.dtype_str == other.dtype_str
        if isinstance(other, str):
            return self.dtype_str == _ALIASES.get(other, other)
        return NotImplemented

    def __hash__(self):
        return hash(self.dtype_str)

    def is_float(self):
        return self.type in ("float", "bfloat")

    def is_int(self):
        return self.type == "int"

    def is_uint(self):
        return self.type == "uint"

    def with_lanes(self, lanes):
        base = self.dtype_str.split("x")[0] if self.lanes > 1 else self.dtype_str
        return DataType(base if lanes == 1 else f"{base}x{lanes}")


class _Namespace:
    """An inert TVM namespace (tirx): any attribute is a T-style inert value (kernel-body syntax)."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _lang.Inert(f"{self._name}.{name}")


tirx = _Namespace("tirx")
tir = _Namespace("tir")

_SUBMODULES = ("target", "testing")


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"tvm.{name}: this project (tilelang_ptx) has no TVM and does not provide it")
