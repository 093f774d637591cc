"""kernel.export(dir): the ahead-of-time export from Python (docs/aot.md) writes the files `tl-opt --emit=c`
writes -- the same C source, byte for byte, when tl-opt is beside the library -- and they build as C99."""
import os
import shutil
import subprocess

import pytest

import tilelang_ptx as tilelang

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")
gemm_factory = tilelang.load_file(os.path.join(EXAMPLES, "gemm.py")).matmul


def _tl_opt():
    lib = os.environ.get("TL_LIBRARY")
    for d in ([os.path.dirname(lib)] if lib else []) + [os.path.join(EXAMPLES, "..", "build-test"),
                                                         os.path.join(EXAMPLES, "..", "build")]:
        p = os.path.join(d, "tl-opt")
        if os.access(p, os.X_OK):
            return p
    return None


def test_export_gemm(tmp_path):
    kernel = gemm_factory(256, 256, 256)
    h, c = kernel.export(str(tmp_path), name="matmul")
    assert (h, c) == (str(tmp_path / "matmul.h"), str(tmp_path / "matmul.c"))
    header = open(h).read()
    assert "int matmul(const DLTensor *A, const DLTensor *B, DLTensor *C, void *stream);" in header
    assert "float16[256, 256]" in header
    src = open(c).read()
    assert '#include "matmul.h"' in src and "static const unsigned char tlaot_ptx[" in src
    cc = shutil.which("cc")
    if cc:
        subprocess.run([cc, "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-c", c, "-o",
                        str(tmp_path / "matmul.o")], check=True)
    tl_opt = _tl_opt()
    if tl_opt and kernel.target == "auto" and "sm_80" in src:
        out = tmp_path / "cli"
        subprocess.run([tl_opt, "--emit=c", "--export-name=matmul", "-D", "M=256", "-D", "N=256", "-D", "K=256",
                        "--target=sm_80", os.path.join(EXAMPLES, "gemm.py"), "-o", str(out)], check=True,
                       env=dict(os.environ, TL_PTXAS="/nonexistent"))
        assert open(out / "matmul.c").read() == src


def test_export_name_and_errors(tmp_path):
    kernel = gemm_factory(128, 128, 128)
    h, c = kernel.export(str(tmp_path), name="my_gemm")
    assert os.path.basename(c) == "my_gemm.c" and "int my_gemm(" in open(h).read()
    h, c = kernel.export(str(tmp_path))  # the default name is never C's main
    assert os.path.basename(c) != "main.c" and os.path.exists(c)
    with pytest.raises(tilelang.KernelError if hasattr(tilelang, "KernelError") else Exception,
                       match="not a C identifier"):
        kernel.export(str(tmp_path), name="2bad")
