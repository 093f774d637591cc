# kernel.show_layouts(dir): the layouts layout inference chose, as text and SVG pictures
# (docs/layouts.md "Seeing the layouts"), through tl_kernel_dump_layouts.  Values derived from
# docs/layouts.md (mma.sync m16n8k16's accumulator map, the 64-byte swizzle), not from the dump.
import os
import xml.etree.ElementTree as ET

import tilelang_ptx as tilelang
import tilelang_ptx.language as T

NS = "{http://www.w3.org/2000/svg}"


@tilelang.jit(out_idx=-1)
def matmul(M=256, N=256, K=256, block_M=128, block_N=128, block_K=32, dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])
    return main


def _section(text, name):
    """The lines of buffer `name`'s section of the dump."""
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith(f"buffer {name}:"))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith(" ")), len(lines))
    return lines[start:end]


def _row(section, label):
    row = next(l for l in section if l.startswith(f"    {label}: "))
    return row.split(": ", 1)[1].split()


def test_show_layouts_text_and_svg(tmp_path):
    k = matmul()
    out = tmp_path / "layouts"
    text = k.show_layouts(out)
    c = _section(text, "C_local")
    assert c[0] == "buffer C_local: local.fragment float32[128, 128]"
    assert "MMA_C" in c[1] and "warps 2 x 2" in c[1]
    # c0, c1 = C[g][2t, 2t+1] (lane 4g + t), n8 tile 1 in registers 4..7, c2 = C[g + 8][2t]
    assert _row(c, 0)[:9] == ["T0:r0", "T0:r1", "T1:r0", "T1:r1", "T2:r0", "T2:r1", "T3:r0", "T3:r1", "T0:r4"]
    assert _row(c, 1)[0] == "T4:r0" and _row(c, 8)[0] == "T0:r2"
    a = _section(text, "A_shared")
    assert a[0] == "buffer A_shared: shared.dyn float16[2, 128, 32]" and "64-byte swizzle" in a[1]
    # column 0 of rows 0..7 (one ldmatrix phase): bank groups 4*(i%2) + i/2, all distinct
    assert [_row(a, i)[0].split(":")[1] for i in range(8)] == ["b0", "b16", "b4", "b20", "b8", "b24", "b12", "b28"]

    files = sorted(os.listdir(out))
    assert files == ["main.A_shared.svg", "main.B_shared.svg", "main.C_local.svg"]
    assert [l for l in text.splitlines() if l.startswith("svg: ")] == [f"svg: {out / f}" for f in files]
    root = ET.parse(out / "main.C_local.svg").getroot()
    assert root.tag == NS + "svg"
    cells = [r for r in root.iter(NS + "rect") if r.get("class") == "cell"]
    assert len(cells) == 16 * 16
    group = next(g for g in root.iter(NS + "g") if g.get("id") == "cells")
    kids = list(group)
    labels = [kids[i + 1].text for i, e in enumerate(kids) if e.get("class") == "cell"]
    assert labels[:9] == _row(c, 0)[:9]
    shared = ET.parse(out / "main.A_shared.svg").getroot()
    assert sum(r.get("class") == "cell" for r in shared.iter(NS + "rect")) == 8 * 32


def test_show_layouts_full_without_dir():
    text = matmul().show_layouts(full=True)
    c = _section(text, "C_local")
    # docs/layouts.md's worked example: C[17][9] is (thread 4, register 37); C[127][127] is (127, 127)
    assert _row(c, 17)[9] == "T4:r37" and _row(c, 127)[127] == "T127:r127"
    assert "svg: " not in text


def test_rule_in_words_matches_every_cell():
    """The rule line of C_local, evaluated for every (i, j) (integer division), gives the thread and
    register the map shows: the formula printed and the map used are the same."""
    c = _section(matmul().show_layouts(full=True), "C_local")
    rule = next(l for l in c if l.startswith("  rule: ")).split("rule: ", 1)[1]
    tid_expr, reg_expr = (part.split(" = ", 1)[1].replace("/", "//") for part in rule.split("; "))
    for i in range(128):
        row = _row(c, i)
        for j in range(128):
            assert row[j] == f"T{eval(tid_expr, {'i': i, 'j': j})}:r{eval(reg_expr, {'i': i, 'j': j})}", (i, j)
