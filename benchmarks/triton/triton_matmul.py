"""A tutorial-style Triton GEMM (grouped program ordering, f32 accumulation),
written for the benchmarks of issue 6: benchmarks/triton/gemm_triton.py
times it on the shapes of benchmarks/gemm, and
benchmarks/compile/triton_first_call.py measures its first call.

C[M, N] = A[M, K] @ B[K, N]; any strides, so B may be a transposed view
(NT layout: B stored N x K, passed as b.t()).  The output has A's dtype.

load() imports torch and Triton and returns (torch, triton, matmul_kernel),
or raises ImportError with the reason, so that callers can print a SKIP line.
"""

# Configurations (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_stages, num_warps).
# FIXED is the one configuration of the first-call measurement (no autotune:
# one compilation): the first configuration of Triton's matmul tutorial for
# float16 on Hopper-class GPUs.  TUNE is the small autotuning set of the
# throughput benchmark: the tutorial's large tiles plus small-M tiles for the
# decode-like shapes (M = 16, 128).
FIXED = (128, 256, 64, 8, 3, 8)
TUNE = [
    (128, 256, 64, 8, 3, 8),
    (256, 128, 64, 8, 3, 8),
    (128, 128, 64, 8, 4, 4),
    (128, 128, 32, 8, 4, 4),
    (64, 256, 32, 8, 4, 4),
    (64, 128, 64, 8, 4, 4),
    (32, 128, 128, 8, 4, 4),
    (16, 128, 128, 8, 4, 4),
    (16, 64, 256, 8, 3, 4),
]


def load(autotune):
    """Imports torch and Triton; returns (torch, triton, run) where
    run(a, b) computes a @ b with the Triton kernel and run.config() names
    the configuration used last."""
    import torch  # noqa: F401  (ImportError propagates)
    import triton
    import triton.language as tl

    @triton.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      GROUP_M: tl.constexpr):
        pid = tl.program_id(0)
        num_pid_m = tl.cdiv(M, BLOCK_M)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        in_group = GROUP_M * num_pid_n
        group = pid // in_group
        first_m = group * GROUP_M
        group_m = min(num_pid_m - first_m, GROUP_M)
        pid_m = first_m + ((pid % in_group) % group_m)
        pid_n = (pid % in_group) // group_m
        rm = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
        rn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
        rk = tl.arange(0, BLOCK_K)
        a_ptrs = a_ptr + rm[:, None] * sam + rk[None, :] * sak
        b_ptrs = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            a = tl.load(a_ptrs, mask=rk[None, :] < K - k * BLOCK_K, other=0.0)
            b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BLOCK_K, other=0.0)
            acc = tl.dot(a, b, acc)
            a_ptrs += BLOCK_K * sak
            b_ptrs += BLOCK_K * sbk
        cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        c_ptrs = c_ptr + cm[:, None] * scm + cn[None, :] * scn
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty),
                 mask=(cm[:, None] < M) & (cn[None, :] < N))

    if autotune:
        kernel = triton.autotune(
            configs=[triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": g},
                                   num_stages=s, num_warps=w) for (m, n, k, g, s, w) in TUNE],
            key=["M", "N", "K", "sbk", "sbn"])(matmul_kernel)
    else:
        kernel = matmul_kernel
    state = {"config": None}

    def run(a, b, c=None):
        M, K = a.shape
        K2, N = b.shape
        assert K == K2, "inner dimensions differ"
        if c is None:
            c = torch.empty((M, N), device=a.device, dtype=a.dtype)

        def grid(meta):
            return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)

        if autotune:
            kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                         c.stride(0), c.stride(1))
        else:
            bm, bn, bk, g, s, w = FIXED
            kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                         c.stride(0), c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=g,
                         num_stages=s, num_warps=w)
        return c

    def config():
        if autotune:
            cfg = getattr(kernel, "best_config", None)
            if cfg is None:
                return "?"
            kw = cfg.kwargs
            return "%dx%dx%d/g%d/s%d/w%d" % (kw["BLOCK_M"], kw["BLOCK_N"], kw["BLOCK_K"],
                                             kw["GROUP_M"], cfg.num_stages, cfg.num_warps)
        bm, bn, bk, g, s, w = FIXED
        return "%dx%dx%d/g%d/s%d/w%d" % (bm, bn, bk, g, s, w)

    run.config = config
    return torch, triton, run
