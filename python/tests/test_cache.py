# The disk kernel cache through the Python package (lib/Runtime/cache.c): a second compile of the same
# kernel in a fresh in-process cache hits the disk entry; a different binding misses.  A temporary
# TL_CACHE_DIR: the user's cache is never touched (conftest.py turns the cache off elsewhere).
import os
import subprocess
import sys

import tilelang_ptx as tilelang

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "..", "examples", "elementwise_add.py")


def _compile(M):
    mod = tilelang.load_file(EXAMPLE)
    return mod.elementwise_add(M=M, N=256)


def test_second_compile_hits_the_disk_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TL_CACHE", "1")
    monkeypatch.setenv("TL_CACHE_DIR", str(tmp_path))
    tilelang.clear_cache()
    a = _compile(64)
    assert a.cache_result == "miss"
    tilelang.clear_cache()  # the in-process cache: the next compile reaches the library
    b = _compile(64)
    assert b.cache_result == "hit"
    assert b.get_kernel_source() == a.get_kernel_source()
    tilelang.clear_cache()
    assert _compile(128).cache_result == "miss"
    assert len([f for f in os.listdir(tmp_path) if f.endswith(".tlk")]) == 2
    tilelang.clear_cache()


def test_another_process_hits(tmp_path):
    env = dict(os.environ, TL_CACHE="1", TL_CACHE_DIR=str(tmp_path))
    code = ("import sys, tilelang_ptx as t; k = t.load_file(sys.argv[1]).elementwise_add(M=32, N=256); "
            "print(k.cache_result)")
    got = [subprocess.run([sys.executable, "-c", code, EXAMPLE], env=env, capture_output=True, text=True,
                          check=True).stdout.strip() for _ in range(2)]
    assert got == ["miss", "hit"]


def test_off_by_default_in_the_tests():
    tilelang.clear_cache()
    assert _compile(16).cache_result == "off"
    tilelang.clear_cache()
