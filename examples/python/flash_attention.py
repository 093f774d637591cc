"""FlashAttention forward (batch, heads, seq_len, dim), online softmax with exp2, optional causal mask,
called from Python as TileLang users do: flashattn(...)(Q, K, V) returns the output (out_idx=[3]).
The kernel file is examples/flash_attention.py, imported unchanged with tilelang.load_file.

    python3 examples/python/flash_attention.py           # GPU with PyTorch: 1x8x1024x64 f16, causal and
                                                         # not, vs torch scaled_dot_product_attention
    python3 examples/python/flash_attention.py --small   # CPU SIMT executor with NumPy: 1x2x128x32
Prints "flash_attention: PASS ..." and exits 0, or raises."""
import os
import sys

import tilelang_ptx as tilelang


# The kernel is examples/flash_attention.py, a TileLang file written for `import tilelang`, unchanged.
flashattn = tilelang.load_file(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                            "flash_attention.py")).flashattn


def ref_numpy(Q, K, V, is_causal):
    import numpy as np
    q, k, v = (x.astype(np.float32) for x in (Q, K, V))
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
    if is_causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


if __name__ == "__main__":
    gpu = "--small" not in sys.argv and tilelang.testing.torch_cuda_available()
    if gpu:
        import torch
    for is_causal in (False, True):
        if gpu:
            B, H, S, D = 1, 8, 1024, 64
            kernel = flashattn(B, H, S, D, is_causal)
            Q, K, V = (torch.randn(B, H, S, D, dtype=torch.float16, device="cuda") for _ in range(3))
            O = kernel(Q, K, V)
            ref = torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=is_causal)
            where = f"GPU (PyTorch, vs SDPA), {B}x{H}x{S}x{D}"
        else:
            import numpy as np
            B, H, S, D = 1, 2, 128, 32
            kernel = flashattn(B, H, S, D, is_causal, block_M=64, block_N=32, num_stages=1)
            rng = np.random.default_rng(0)
            Q, K, V = (rng.standard_normal((B, H, S, D)).astype(np.float16) for _ in range(3))
            O = kernel(Q, K, V)
            ref = ref_numpy(Q, K, V, is_causal)
            where = f"CPU SIMT executor (NumPy), {B}x{H}x{S}x{D}"
        tilelang.testing.torch_assert_close(O, ref, atol=1e-2, rtol=1e-2, max_mismatched_ratio=0.01)
        print(f"flash_attention: PASS (causal={is_causal}) on the {where}")
