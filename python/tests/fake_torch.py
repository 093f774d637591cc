"""A stand-in for the parts of PyTorch that tilelang_ptx's fast paths read (torch.Tensor's shape,
dtype, get_device, data_ptr, stride, new_empty, expand, unbind, is_contiguous; torch.empty,
torch.empty_like; dtypes), over NumPy host arrays: it lets the CI machine, which has no PyTorch, run
the PyTorch code paths (the pure-Python one and _fastcall's) on the CPU executor.  Installed as
sys.modules["torch"] by test_torch_path and test_fastcall.py when PyTorch itself is missing.
CUDA tensors (test_faults.py, on the fake CUDA driver of benchmarks/launch): cuda_tensor(array) and
device="cuda"/an ordinal give a tensor of device 0 whose data_ptr is a made-up address of the fake
driver's device memory, with the NumPy array as a host shadow that nothing on the device path writes."""
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


_next_cuda = [0x7F0040000000]  # the fake driver's memory of device 0, above what its cuMemAlloc hands out


class Tensor:
    def __init__(self, array, cuda=False):
        self.a = array
        self.shape = tuple(array.shape)
        self.dtype = globals()[array.dtype.name]
        self.device = device("cuda" if cuda else "cpu")
        self.is_cuda = cuda
        if cuda:
            self._ptr = _next_cuda[0]
            _next_cuda[0] += (array.nbytes + 255) // 256 * 256 + 256

    def get_device(self):
        return 0 if self.is_cuda else -1

    def data_ptr(self):
        return self._ptr if self.is_cuda else self.a.__array_interface__["data"][0]

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
        return Tensor(np.empty(shape, dtype=(dtype or self.dtype).name), self.is_cuda)

    def expand(self, shape):
        t = Tensor(np.broadcast_to(self.a, shape))
        if self.is_cuda:
            t.device, t.is_cuda, t._ptr = self.device, True, self._ptr
        return t

    def unbind(self):
        return tuple(Tensor(x) for x in self.a)

    def is_contiguous(self):
        return self.a.flags.c_contiguous


def empty(shape, dtype=None, device=None):
    assert device in ("cpu", "cuda", 0), device
    return Tensor(np.empty(shape, dtype=dtype.name), device != "cpu")


def empty_like(t):
    return Tensor(np.empty(t.shape, dtype=t.a.dtype), t.is_cuda)


def cuda_tensor(array):
    return Tensor(np.ascontiguousarray(array), True)


class _Stream:
    cuda_stream = 0  # the legacy default stream


class cuda:
    @staticmethod
    def current_stream(index=None):
        return _Stream()


def from_numpy(a):
    return Tensor(np.ascontiguousarray(a))
