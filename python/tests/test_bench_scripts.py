# The CPU-testable parts of benchmarks/tilelang_examples_speed.py and benchmarks/tilelang_side.py: the parser of
# the latencies TileLang's examples print (sample lines written by the examples' own print statements), the
# ratios and geometric means, the argument checks, a whole run of the examples script over two small programs
# (one side under a stand-in `tilelang` package, the other under tilelang_ptx, one of them failing on our side),
# and the benchmark kernel files compiled by tilelang_ptx and run on the CPU executor against NumPy.
import importlib.util
import math
import os
import sys
import textwrap

import numpy as np
import pytest

import tilelang_ptx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "benchmarks")
PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(tilelang_ptx.__file__)))

if not os.path.isfile(os.path.join(BENCH, "tilelang_side.py")):
    pytest.skip("benchmarks/ is not beside this test (an installed copy of the tests)", allow_module_level=True)


def _load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(BENCH, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


speed = _load("tilelang_examples_speed")
side = _load("tilelang_side")


def one(line):
    got = speed.parse_metrics(line)
    assert len(got) == 1, (line, got)
    m = got[0]
    return m["label"], m["kind"], round(m["value"], 9), m["reference"]


# The output of the examples' print statements, as they format it.
@pytest.mark.parametrize("line, want", [
    ("Tile-lang: {:.2f} ms".format(0.5234), ("tilelang", "ms", 0.52, False)),
    ("Tile-lang: {:.2f} TFlops".format(612.3456), ("tilelang", "tflops", 612.35, False)),
    (f"Latency: {0.123456789} ms", ("-", "ms", 0.123456789, False)),
    ("Ref: {:.2f} ms".format(0.61), ("ref", "ms", 0.61, True)),
    ("torch: {:.2f} TFlops".format(1.2), ("torch", "tflops", 1.2, True)),
    ("tilelang: {:.2f} ms".format(0.31), ("tilelang", "ms", 0.31, False)),
    (f"Ref latency: {0.4411}", ("ref", "ms", 0.4411, True)),           # do_bench's unit, ms, unprinted
    (f"Best latency: {0.30211}", ("best", "ms", 0.30211, False)),
    (f"Best TFlops: {455.1}", ("best", "tflops", 455.1, False)),
    (f"TFlops: {455.1} TFlops", ("-", "tflops", 455.1, False)),
    (f"TileLang latency: {0.222}", ("tilelang", "ms", 0.222, False)),
    (f"Triton latency: {0.1234:.3f} ms", ("triton", "ms", 0.123, True)),
    (f"Torch Latency: {1.5} ms", ("torch", "ms", 1.5, True)),
    (f"fla time: {0.7} ms", ("fla", "ms", 0.7, True)),
    (f"Average time: {0.000123:.6f} seconds", ("-", "ms", 0.123, False)),
    (f"Average time of ref: {0.000223:.6f} seconds", ("ref", "ms", 0.223, True)),
    (f"tilelang Latency: {0.2}ms", ("tilelang", "ms", 0.2, False)),
    (f"\nKernel execution time (repeat = 100): {0.456:.3f} ms".strip(), ("execution", "ms", 0.456, False)),
    (f"TileLang SIMT Latency: {0.05} ms\n", ("tilelang simt", "ms", 0.05, False)),
    (f"Average flops: {1234.5:.2f} GFLOPS", ("-", "tflops", 1.2345, False)),
    ("{:.4f} ms".format(0.1234), ("-", "ms", 0.1234, False)),
    ("time:  0.77", ("-", "ms", 0.77, False)),
    ("dense time:  0.456", ("dense", "ms", 0.456, True)),
    ("[e4m3_float8 -> float32] Latency: 0.11 ms", ("e4m3_float8 - float32", "ms", 0.11, False)),
])
def test_parse_one_metric(line, want):
    assert one(line) == want


@pytest.mark.parametrize("line", [
    "Speedup: 1.234x", "Total FLOPs: 1.10 TFlops", "Time saved: 12.00s (45.1%)", "End-to-end: 3.456 s",
    "All checks passed.", "0.5", "max diff: 1e-3", "tilelang cumsum passed √", "\x1b[91mwarn\x1b[0m",
    "  Wall time: 12.34s", "Latency: nan ms",
])
def test_lines_that_are_not_kernel_timings(line):
    assert speed.parse_metrics(line) == []


def test_several_metrics_on_one_line():
    got = speed.parse_metrics("Reference TFLOPS: 5.67, Latency: 0.00456 s\n"
                              "Fast Flash Attention V2 (Tile-lang): 0.33 ms | 400.12 TFlops\n"
                              "[cfg] latency=0.1234ms, wall=12.34s, config={'block_M': 128}")
    assert [(m["label"], m["kind"], round(m["value"], 6), m["reference"]) for m in got] == [
        ("reference", "tflops", 5.67, True), ("-", "ms", 4.56, True),  # the line's first label says whose
        ("fast flash attention v2", "ms", 0.33, False), ("cfg", "ms", 0.1234, False)]


def test_compare_medians_and_geomean():
    out = lambda lat, ref: f"Ref: {ref} ms\nLatency: {lat} ms\nLatency: {2 * lat} ms\nTFlops: 9 TFlops"
    ours = speed.median_metrics([speed.parse_metrics(out(x, 1.0)) for x in (1.0, 5.0, 2.0)])    # median 2
    theirs = speed.median_metrics([speed.parse_metrics(out(x, 1.1)) for x in (4.0, 3.0, 9.0)])  # median 4
    ratio, pairs, drift = speed.compare(ours, theirs)
    assert pairs == {"- [ms]": 2.0, "- [ms] #2": 2.0}  # latencies preferred over TFLOPS; references left out
    assert ratio == pytest.approx(2.0) and drift == pytest.approx(1.1)
    # throughputs only: ours / theirs
    r, pairs, _ = speed.compare(speed.median_metrics([speed.parse_metrics("TFlops: 300 TFlops")]),
                                speed.median_metrics([speed.parse_metrics("TFlops: 600 TFlops")]))
    assert r == pytest.approx(0.5) and list(pairs) == ["- [tflops]"]
    assert speed.compare({}, {})[0] is None
    # printed too coarsely to tell: "0.04" against "0.06" (each +-0.005) is left out of the file ratio
    r, pairs, _ = speed.compare(speed.median_metrics([speed.parse_metrics("tilelang: 0.06 ms\nTFlops: 2.38")]),
                                speed.median_metrics([speed.parse_metrics("tilelang: 0.04 ms\nTFlops: 3.82")]))
    assert r == pytest.approx(2.38 / 3.82)  # the throughputs, printed finely enough, decide
    assert pairs == {"tilelang [ms] (coarse)": pytest.approx(0.6667, abs=1e-4), "- [tflops]": pytest.approx(2.38 / 3.82)}
    r, pairs, _ = speed.compare(speed.median_metrics([speed.parse_metrics("tilelang: 0.06 ms")]),
                                speed.median_metrics([speed.parse_metrics("tilelang: 0.04 ms")]))
    assert r is None and list(pairs) == ["tilelang [ms] (coarse)"]
    r, pairs, _ = speed.compare(speed.median_metrics([speed.parse_metrics("tilelang: 13.72 ms")]),
                                speed.median_metrics([speed.parse_metrics("tilelang: 8.92 ms")]))
    assert r == pytest.approx(8.92 / 13.72) and list(pairs) == ["tilelang [ms]"]


def test_rel_precision():
    assert speed.rel_precision("0.04") == pytest.approx(0.125)
    assert speed.rel_precision("8.92") == pytest.approx(0.005 / 8.92)
    assert speed.rel_precision("455") == pytest.approx(0.5 / 455)
    assert speed.rel_precision("1.5e-3") == pytest.approx(0.05 / 1.5)
    assert speed.rel_precision("0") == float("inf")


def test_family_geomean():
    assert speed.geomean([2.0, 8.0]) == pytest.approx(4.0)
    assert speed.geomean([None, 0, float("nan")]) is None
    recs = [{"family": "gemm", "ratio": 2.0}, {"family": "gemm", "ratio": 0.5}, {"family": "gemm", "ratio": None},
            {"family": "norm", "ratio": 4.0}]
    fams, overall = speed.summarize(recs)
    assert fams == {"gemm": {"files": 3, "compared": 2, "geomean": pytest.approx(1.0)},
                    "norm": {"files": 1, "compared": 1, "geomean": pytest.approx(4.0)}}
    assert overall == pytest.approx(4.0 ** (1 / 3))


def test_examples_arguments(monkeypatch):
    a = speed.parse_args(["/x/examples", "--tilelang-site", "/tmp/site", "--timeout", "60", "--ours-path", "/p"])
    assert (a.runs, a.timeout, a.jobs, a.tilelang_site, a.tilelang_python) == (3, 60.0, 1, "/tmp/site", sys.executable)
    monkeypatch.setenv("PYTHONPATH", "/old")
    cmd, env = speed.side_command("tilelang", "/x/e.py", a)
    assert cmd == [sys.executable, "/x/e.py"] and env["PYTHONPATH"] == os.pathsep.join(["/tmp/site", "/old"])
    cmd, env = speed.side_command("ours", "/x/e.py", a)
    assert cmd == [sys.executable, "-m", "tilelang_ptx", "/x/e.py"]
    assert env["PYTHONPATH"] == os.pathsep.join(["/p", "/tmp/site", "/old"])
    a.ours_without_site = True
    assert speed.side_command("ours", "/x/e.py", a)[1]["PYTHONPATH"] == os.pathsep.join(["/p", "/old"])
    for bad in (["x", "--jobs", "2"], ["x", "--runs", "0"], []):
        with pytest.raises(SystemExit):
            speed.parse_args(bad)


def test_side_arguments_and_table():
    assert side.parse_gemm("4096x11008x4096") == (4096, 11008, 4096, "float16")
    assert side.parse_gemm("2048,2048,2048,bfloat16") == (2048, 2048, 2048, "bfloat16")
    assert side.parse_attn("1,32,4096,128") == (1, 32, 4096, 128)
    for bad in ("1,2", "1,2,3,float8", "a,b,c", "0,1,1"):
        with pytest.raises(Exception):
            side.parse_gemm(bad)
    a = side.parse_args([])
    assert a.gemm == side.DEFAULT_GEMM and a.attn == [(1, 32, 4096, 128)] and len(a.gemm) == 5
    with pytest.raises(SystemExit):
        side.parse_args(["--iters", "0"])
    # a case with TileLang absent: its columns are "-"
    rec = {"case": "gemm 64x64x64 float16", "ref": "cublas", "variants": ["nn"], "flops": 2.0e12,
           "ms": {"cublas": 4.0, "ours_nn": 5.0}, "err": {"ours_nn": 1e-3}}
    rows = side.table_rows([rec])
    assert rows[1] == ["gemm 64x64x64 float16", "nn", "cublas", "500", "-", "400", "-", "-", "0.800", "-",
                       "1.0e-03"]
    rec["ms"]["tilelang_nn"] = 10.0
    rec["err"]["tilelang_nn"] = "FAIL RuntimeError: x"
    assert side.table_rows([rec])[1][4:10] == ["200", "400", "2.000", "0.400", "0.800", "FAIL"]
    assert side.attn_flops(1, 32, 4096, 128, True) == 2.0 * 32 * 4096 * 4096 * 128
    assert "ours/TileLang" in side.format_table(side.table_rows([rec]))
    # the backward: --examples is required, default cases, 2.5x the forward's FLOPs
    with pytest.raises(SystemExit):
        side.parse_args(["--only", "bwd"])
    a = side.parse_args(["--only", "bwd", "--examples", "/x", "--bwd", "2,4,256,64"])
    assert a.bwd == [(2, 4, 256, 64)] and a.examples == "/x"
    assert side.parse_args(["--only", "bwd", "--examples", "/x"]).bwd == side.DEFAULT_BWD
    assert side.bwd_flops(1, 32, 4096, 128, False) == 2.5 * 4.0 * 32 * 4096 * 4096 * 128


EXAMPLE = textwrap.dedent('''
    import sys
    import tilelang
    ours = tilelang.__name__ == "tilelang_ptx"
    if ours and "{fail}" == "yes":
        raise NotImplementedError("not on our side")
    print("Ref: {{:.2f}} ms".format(1.0))
    print("Latency: {{}} ms".format(1.0 if ours else 3.0))
    print("TFlops: {{}} TFlops".format(300.0 if ours else 100.0))
''')


def test_examples_script_end_to_end(tmp_path, capsys):
    ex = tmp_path / "examples"
    for fam, name, fail in (("gemm", "example_fast.py", "no"), ("norm", "example_fails.py", "yes")):
        (ex / fam).mkdir(parents=True)
        (ex / fam / name).write_text(EXAMPLE.format(fail=fail))
    (ex / "gemm" / "helper.py").write_text("raise SystemExit(9)\n")  # not an example_*.py: not run
    site = tmp_path / "site" / "tilelang"  # stands for TileLang's site
    site.mkdir(parents=True)
    (site / "__init__.py").write_text("")
    out = tmp_path / "res"
    assert speed.main([str(ex), "--runs", "2", "--timeout", "120", "--tilelang-site", str(tmp_path / "site"),
                       "--ours-path", PKG_PARENT, "--out", str(out)]) == 0
    import json
    res = json.loads((tmp_path / "res.json").read_text())
    files = {r["rel"]: r for r in res["files"]}
    assert set(files) == {os.path.join("gemm", "example_fast.py"), os.path.join("norm", "example_fails.py")}
    fast = files[os.path.join("gemm", "example_fast.py")]
    assert fast["ratio"] == pytest.approx(3.0) and fast["drift"] == pytest.approx(1.0)
    assert len(fast["tilelang"]["walls"]) == 2 and len(fast["ours"]["walls"]) == 2
    fails = files[os.path.join("norm", "example_fails.py")]
    assert fails["ratio"] is None and fails["tilelang"]["status"] == "ok"
    assert fails["ours"]["status"] == "fail" and len(fails["ours"]["walls"]) == 1  # not run again
    assert "ours: fail (exit 1: NotImplementedError: not on our side)" in fails["reason"]
    assert res["families"]["gemm"]["geomean"] == pytest.approx(3.0)
    assert res["families"]["norm"] == {"files": 1, "compared": 0, "geomean": None}
    md = (tmp_path / "res.md").read_text()
    assert "| gemm | gemm/example_fast.py | ok | ok | 3.000 | 1.000 |" in md.replace(os.sep, "/")
    assert "| **all** | 2 | 1 | **3.000** |" in md


def _ref_attn(q, k, v, causal):
    qf, kf, vf = (x.astype(np.float32) for x in (q, k, v))
    s = qf @ kf.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ vf


def test_benchmark_kernels_on_the_cpu():
    g = tilelang_ptx.load_file(os.path.join(BENCH, "kernels", "gemm.py"), module_name="bench_gemm_test")
    fa = tilelang_ptx.load_file(os.path.join(BENCH, "kernels", "flash_attention.py"), module_name="bench_fa_test")
    rng = np.random.default_rng(1)
    M, N, K = 128, 192, 96
    A = rng.standard_normal((M, K)).astype(np.float16)
    B = rng.standard_normal((K, N)).astype(np.float16)
    ref = A.astype(np.float32) @ B.astype(np.float32)
    nn = g.matmul(M, N, K, 64, 64, 32, "float16", "float32", num_stages=2, threads=128)
    nt = g.matmul_nt(M, N, K, 64, 64, 32, 2, 128, True, "float16", "float32")
    assert type(nn).__module__.startswith("tilelang_ptx")
    for C in (nn(A, B), nt(A, np.ascontiguousarray(B.T))):
        assert np.abs(C.astype(np.float32) - ref).max() <= 2e-3 * np.abs(ref).max()
    b, h, s, d = 1, 2, 128, 64
    q, k, v = (rng.standard_normal((b, h, s, d)).astype(np.float16) for _ in range(3))
    tr = lambda x: np.ascontiguousarray(x.transpose(0, 2, 1, 3))
    for causal in (False, True):
        want = _ref_attn(q, k, v, causal)
        o = fa.flashattn(b, h, s, d, causal, block_M=64, block_N=64, num_stages=2, threads=128, layout="bhsd")(q, k, v)
        assert np.abs(o.astype(np.float32) - want).max() < 2e-3
        o = fa.flashattn(b, h, s, d, causal, block_M=64, block_N=64, num_stages=2, threads=128)(tr(q), tr(k), tr(v))
        assert np.abs(tr(o).astype(np.float32) - want).max() < 2e-3
    assert math.isfinite(float(o.astype(np.float32).sum()))


def test_examples_harness_runs_an_out_of_memory_failure_again_alone(tmp_path):
    """scripts/run-tilelang-examples.py: a file that fails for want of GPU memory beside the other jobs
    runs once more alone after the pool (its record says so and keeps the first error); a file that fails
    otherwise is not run again."""
    import json
    import subprocess
    script = os.path.join(ROOT, "scripts", "run-tilelang-examples.py")
    ex = tmp_path / "ex" / "a"
    ex.mkdir(parents=True)
    marker = tmp_path / "ran_once"
    (ex / "example_oom.py").write_text(textwrap.dedent(f"""\
        import os
        if not os.path.exists({str(marker)!r}):
            open({str(marker)!r}, "w").close()
            raise RuntimeError("CUDA error: out of memory")
        """))
    (ex / "example_bad.py").write_text("raise ValueError('wrong')\n")
    (ex / "example_ok.py").write_text("print('fine')\n")
    out = tmp_path / "out.jsonl"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (PKG_PARENT, os.environ.get("PYTHONPATH")) if p))
    cp = subprocess.run([sys.executable, script, "--jobs", "3", str(tmp_path / "ex"), str(out)], env=env,
                        capture_output=True, text=True, timeout=120)
    assert cp.returncode == 0, cp.stderr
    recs = {r["file"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert recs["a/example_oom.py"]["result"] == "pass"
    assert recs["a/example_oom.py"]["alone"] is True
    assert "out of memory" in recs["a/example_oom.py"]["beside_others"]
    assert recs["a/example_bad.py"]["result"] == "fail" and "alone" not in recs["a/example_bad.py"]
    assert recs["a/example_bad.py"]["error"] == "ValueError: wrong"
    assert recs["a/example_ok.py"]["result"] == "pass" and "alone" not in recs["a/example_ok.py"]
