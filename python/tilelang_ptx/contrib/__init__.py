"""tilelang.contrib -- nvcc (compute capability of a target or device)."""
