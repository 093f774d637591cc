"""Element-wise C = A + B (2-D tiles through fragments), the factory decorated with @tilelang.jit: the
kernel file examples/elementwise_add.py, imported unchanged with tilelang.load_file.

    python3 examples/python/elementwise.py           # GPU with PyTorch: 4096x4096 f16 vs torch
    python3 examples/python/elementwise.py --small   # CPU SIMT executor with NumPy, 64x256 f32
Prints "elementwise: PASS ..." and exits 0, or raises."""
import os
import sys

import tilelang_ptx as tilelang


# The kernel is examples/elementwise_add.py, a TileLang file written for `import tilelang`, unchanged.
elementwise_add = tilelang.load_file(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                  "elementwise_add.py")).elementwise_add


if __name__ == "__main__":
    gpu = "--small" not in sys.argv and tilelang.testing.torch_cuda_available()
    if gpu:
        import torch
        M, N, dtype = 4096, 4096, "float16"
        kernel = elementwise_add(M, N, dtype=dtype)
        A = torch.randn(M, N, dtype=torch.float16, device="cuda")
        B = torch.randn(M, N, dtype=torch.float16, device="cuda")
        C = kernel(A, B)
        tilelang.testing.torch_assert_close(C, A + B, atol=1e-2, rtol=1e-2, max_mismatched_ratio=0)
        where = "GPU (PyTorch), 4096x4096 float16"
    else:
        import numpy as np
        M, N = 64, 256
        kernel = elementwise_add(M, N)
        rng = np.random.default_rng(0)
        A = rng.standard_normal((M, N)).astype(np.float32)
        B = rng.standard_normal((M, N)).astype(np.float32)
        C = kernel(A, B)
        tilelang.testing.torch_assert_close(C, A + B, atol=1e-6, rtol=1e-6, max_mismatched_ratio=0)
        where = "CPU SIMT executor (NumPy), 64x256 float32"
    print(f"elementwise: PASS on the {where}")
