#!/usr/bin/env python3
"""Triton GEMM on the shapes of benchmarks/gemm (issue 6): float16 and
bfloat16, NN (B stored K x N) and NT (B stored N x K, passed to the kernel
as a transposed view), square 1024/2048/4096/8192 and the LLM shapes
(16, 8192, 8192), (128, 8192, 8192), (4096, 11008, 4096), (4096, 4096, 14336).

Kernel: benchmarks/triton/triton_matmul.py (tutorial-style, autotuned over a
small set of tiles; the autotuning runs before anything is timed).  Next to
it, torch.matmul (cuBLAS through PyTorch) in the same process.

Method, as benchmarks/gemm: random inputs (uniform [-1, 1) rounded to the
dtype, fresh seed per run); before timing, each result is checked per
element against the float32 product of the same inputs (|got - ref| <=
atol + rtol |ref|, 1e-2 for float16, 2e-2 for bfloat16; the output is
filled with NaN first so unwritten elements fail); CUDA-event timing of each
launch after 10 warm-up launches, median of 50 (TL_BENCH_REPS overrides);
when one set of A, B, C is smaller than 2 x the 60 MB L2, up to 16 copies at
other addresses are rotated.

Usage: gemm_triton.py [SUBSTRING ...]   (select shapes such as 4096x4096x4096)
Output: a table on stdout and $OUT/bench_triton.csv (or ./bench_triton.csv).
Exit 0; 1 when a check fails; 77 (with a SKIP line) without torch, Triton or
a GPU.
"""
import math
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

SHAPES = [(1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
          (16, 8192, 8192), (128, 8192, 8192), (4096, 11008, 4096), (4096, 4096, 14336)]
WARMUP = 10
L2_BYTES = 60.0 * 1024 * 1024


def main():
    try:
        import triton_matmul
        torch, triton, run = triton_matmul.load(autotune=True)
    except Exception as e:  # ImportError, or a Triton too old for the kernel
        print("SKIP: gemm_triton needs PyTorch and Triton (%s: %s)" % (type(e).__name__, e))
        return 77
    if not torch.cuda.is_available():
        print("SKIP: gemm_triton: torch.cuda.is_available() is False (no GPU)")
        return 77
    reps = int(os.environ.get("TL_BENCH_REPS", "50") or 50)
    reps = max(reps, 1)
    want = sys.argv[1:]
    seed = int(time.time())
    torch.manual_seed(seed)
    dev = torch.device("cuda")
    out_dir = os.environ.get("OUT") or "."
    csv_path = os.path.join(out_dir, "bench_triton.csv")
    f = open(csv_path, "w")
    f.write("dtype,layout,M,N,K,config,triton_ms,triton_tflops,torch_ms,torch_tflops,ratio_vs_torch,"
            "max_err,check,rotated_sets\n")
    print("gemm_triton: %s, torch %s, triton %s, seed %d, median of %d launches after %d warm-up"
          % (torch.cuda.get_device_name(0), torch.__version__, triton.__version__, seed, reps, WARMUP))
    print("%-6s %-3s %-17s %-24s %10s %10s %7s %6s %s" % ("dtype", "lay", "MxNxK", "triton config",
                                                       "triton TF", "torch TF", "ratio", "check",
                                                       "max err"))
    failures = 0

    def time_launches(fn, nrot):
        for i in range(WARMUP):
            fn(i % nrot)
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(reps)]
        for i in range(reps):
            ev[i][0].record()
            fn((WARMUP + i) % nrot)
            ev[i][1].record()
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in ev)

    for dname, dt in (("float16", torch.float16), ("bfloat16", torch.bfloat16)):
        for nt in (False, True):
            for (M, N, K) in SHAPES:
                sz = "%dx%dx%d" % (M, N, K)
                if want and not any(w in sz for w in want):
                    continue
                lay = "NT" if nt else "NN"
                set_bytes = (M * K + K * N + M * N) * 2
                nrot = 1 if set_bytes >= 2 * L2_BYTES else min(16, math.ceil(2 * L2_BYTES / set_bytes))
                A = [(torch.rand((M, K), device=dev) * 2 - 1).to(dt)]
                Bs = [(torch.rand((N, K) if nt else (K, N), device=dev) * 2 - 1).to(dt)]
                for _ in range(1, nrot):
                    A.append(A[0].clone())
                    Bs.append(Bs[0].clone())
                B = [b.t() if nt else b for b in Bs]
                C = [torch.empty((M, N), device=dev, dtype=dt) for _ in range(nrot)]
                Ct = [torch.empty((M, N), device=dev, dtype=dt) for _ in range(nrot)]
                # check first (autotuning happens in this first call)
                C[0].fill_(float("nan"))
                run(A[0], B[0], C[0])
                ref = A[0].float() @ B[0].float()
                torch.cuda.synchronize()
                tol = 1e-2 if dt == torch.float16 else 2e-2
                err = (C[0].float() - ref).abs()
                bad = int((~(err <= tol + tol * ref.abs())).sum().item())
                max_err = float(err.max().item()) if bad == 0 else float("inf")
                if bad == 0 and math.isnan(float(err.max().item())):
                    bad = 1
                ok = bad == 0
                cfg = run.config()
                t_tr = t_th = 0.0
                if ok:
                    t_th = time_launches(lambda r: torch.matmul(A[r], B[r], out=Ct[r]), nrot)
                    t_tr = time_launches(lambda r: run(A[r], B[r], C[r]), nrot)
                else:
                    failures += 1
                    print("CHECK FAILED %s %s %s: %d of %d elements differ from the float32 product"
                          % (dname, lay, sz, bad, M * N), file=sys.stderr)
                flop = 2.0 * M * N * K
                tf = flop / (t_tr * 1e-3) / 1e12 if ok else 0.0
                tfc = flop / (t_th * 1e-3) / 1e12 if ok else 0.0
                ratio = tf / tfc if ok and tfc > 0 else 0.0
                print("%-6s %-3s %-17s %-24s %10.1f %10.1f %7.3f %6s %.3g"
                      % ("f16" if dt == torch.float16 else "bf16", lay, sz, cfg, tf, tfc, ratio,
                         "PASS" if ok else "FAIL", max_err))
                sys.stdout.flush()
                f.write("%s,%s,%d,%d,%d,%s,%.4f,%.1f,%.4f,%.1f,%.3f,%.3g,%s,%d\n"
                        % (dname, lay, M, N, K, cfg, t_tr, tf, t_th, tfc, ratio, max_err,
                           "PASS" if ok else "FAIL", nrot))
                f.flush()
                del A, Bs, B, C, Ct, ref, err
                torch.cuda.empty_cache()
    f.close()
    print("csv: %s" % csv_path)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
