# lit configuration of the tilelang-ptx FileCheck tests (test/IR, test/Lower,
# test/NVPTX).  Test files are *.test and *.py files with RUN: lines; the
# substitutions are %tl-opt, %tl-run (when built), %examples (the examples
# directory) and %fake-cuda (when built).  FileCheck and not come from LLVM 19's tools directory.
import os

import lit.formats

config.name = "tilelang-ptx"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".test", ".py"]
config.excludes = ["Inputs", "unit", "fuzz", "GPU", "lit.cfg.py", "lit.site.cfg.py",
                   "CMakeLists.txt"]

config.test_source_root = os.path.dirname(__file__)
if hasattr(config, "tl_obj_root"):
    config.test_exec_root = os.path.join(config.tl_obj_root, "test")
else:
    lit_config.fatal("run lit on the build directory's test/ (it holds lit.site.cfg.py)")

tools_dir = config.tl_tools_dir
path = os.path.pathsep.join([tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.environment["PATH"] = path

tl_opt = os.path.join(tools_dir, "tl-opt")
config.substitutions.append(("%tl-opt", tl_opt))
tl_run = os.path.join(tools_dir, "tl-run")
if os.path.exists(tl_run):
    config.substitutions.append(("%tl-run", tl_run))
    config.available_features.add("tl-run")
config.substitutions.append(("%examples", os.path.join(config.tl_src_root, "examples")))
# ptxas (the CUDA toolkit's; $TL_PTXAS overrides): %ptxas.  A missing ptxas fails
# the tests that use it, as the ptxas label does (docs/testing.md).
config.substitutions.append(("%ptxas", os.environ.get("TL_PTXAS") or "/usr/local/cuda/bin/ptxas"))
# The fake CUDA driver of benchmarks/launch (for TL_CUDA_DRIVER; TL_FAKE_CUDA_DEVICES and TL_FAKE_CUDA_CC
# give it several devices): %fake-cuda, feature "fake-cuda" when built.
fake_cuda = os.path.join(config.tl_obj_root, "gpu-bin", "libtl_fake_cuda.so")
if os.path.exists(fake_cuda):
    config.substitutions.append(("%fake-cuda", fake_cuda))
    config.available_features.add("fake-cuda")

# A Python with NumPy (Debian's python3-numpy; another python3 may come first on PATH) for the tests
# that check tl-run's .npy files against NumPy itself: %python-numpy, feature "numpy".
import subprocess
import sys
for py in [sys.executable, "/usr/bin/python3"]:
    try:
        if subprocess.run([py, "-c", "import numpy"], capture_output=True, timeout=60).returncode == 0:
            config.substitutions.append(("%python-numpy", py))
            config.available_features.add("numpy")
            break
    except (OSError, subprocess.SubprocessError):
        pass

# No test writes the user's kernel cache; test/Runtime/cache.test turns it on
# in a temporary directory.
config.environment["TL_CACHE"] = "0"

# A sanitizer report must abort (a crash), so that `not` cannot mistake it for
# an expected exit status.
config.environment["ASAN_OPTIONS"] = "abort_on_error=1:detect_leaks=1"
config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1:abort_on_error=1"
if config.tl_sanitize:
    config.available_features.add("sanitize")
