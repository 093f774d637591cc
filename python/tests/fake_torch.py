"""A stand-in for the parts of PyTorch that tilelang_ptx's fast paths read (torch.Tensor's shape,
dtype, get_device, data_ptr, stride, new_empty, expand, unbind, is_contiguous; torch.empty,
torch.empty_like; dtypes), over NumPy host arrays: it lets the CI machine, which has no PyTorch, run
the PyTorch code paths (the pure-Python one and _fastcall's) on the CPU executor.  Installed as
sys.modules["torch"] by test_torch_path and test_fastcall.py when PyTorch itself is missing."""
import numpy as np

__name__ = "torch"


class dtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f"torch.{self.name}"

    @property
    def is_floating_point(self):
        return self.name.startswith(("float", "bfloat"))


float16, float32, float64, int32, int64, int8, uint8 = (dtype(n) for n in
                                                          "float16 float32 float64 int32 int64 int8 uint8".split())
bool = dtype("bool")


class device:
    def __init__(self, type):
        self.type, self.index = type, None


class Tensor:
    def __init__(self, array):
        self.a = array
        self.shape = tuple(array.shape)
        self.dtype = globals()[array.dtype.name]
        self.device = device("cpu")
        self.is_cuda = False

    def get_device(self):
        return -1

    def data_ptr(self):
        return self.a.__array_interface__["data"][0]

    def stride(self):
        return tuple(s // self.a.itemsize for s in self.a.strides)

    def detach(self):
        return self

    def float(self):
        return Tensor(self.a.astype(np.float32))

    def cpu(self):
        return self

    def numpy(self):
        return self.a

    def new_empty(self, shape, dtype=None):
        return Tensor(np.empty(shape, dtype=(dtype or self.dtype).name))

    def expand(self, shape):
        return Tensor(np.broadcast_to(self.a, shape))

    def unbind(self):
        return tuple(Tensor(x) for x in self.a)

    def is_contiguous(self):
        return self.a.flags.c_contiguous


def empty(shape, dtype=None, device=None):
    assert device == "cpu", device
    return Tensor(np.empty(shape, dtype=dtype.name))


def empty_like(t):
    return Tensor(np.empty(t.shape, dtype=t.a.dtype))


def from_numpy(a):
    return Tensor(np.ascontiguousarray(a))
