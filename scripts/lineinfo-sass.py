#!/usr/bin/env python3
"""Line information must not change the machine code (issue 32).

For each kernel file (and target) this compiles the PTX twice with tl-opt,
with line information (the default: .file/.loc directives) and with
--no-line-info, assembles both with ptxas -arch=<target> into cubins and
compares the cubins section by section: every section's bytes must be equal
(the SASS in .text.<kernel>, .nv.info*, .nv.constant*, .nv.shared*, ...)
except the line tables ptxas adds for the .loc directives (.debug_line,
.nv_debug_line_sass and their relocations) and the string and symbol tables
(which name those sections); .nv.info* attributes that name a symbol by
its index are compared by the symbol's name (the line sections' symbols
shift the indices).  ptxas -v's resource lines (registers, spills,
shared memory) are compared too.  Without cuobjdump or nvdisasm this is the
SASS comparison: identical .text bytes are identical instructions.

usage: scripts/lineinfo-sass.py --tl-opt build/tl-opt [--ptxas PATH] [--target sm_90a ...]
                                FILE[::-D NAME=V ...] ...
Exit 0 when every pair is identical, 1 when any differs or fails.
"""
import argparse
import os
import re
import struct
import subprocess
import sys
import tempfile
import time

LINE_SECTIONS = re.compile(r"^(\.rela?)?\.(debug_|nv_debug_)|^\.(sh)?strtab$|^\.symtab$")


# .nv.info attributes whose value starts with a symbol index (EIATTR_PARAM_CBANK,
# FRAME_SIZE, MIN_STACK_SIZE, MAX_STACK_SIZE, REGCOUNT): the line tables add
# section symbols, so the same function or constant bank has another index.
SYMBOL_ATTRS = {0x0A, 0x11, 0x12, 0x23, 0x2F}


def symbol_names(data, hdrs, strtab_of):
    """Names of the .symtab entries, by index."""
    for name, typ, off, size, link in hdrs:
        if typ == 2:  # SHT_SYMTAB
            stroff = hdrs[link][2]
            out = []
            for i in range(size // 24):
                nm = struct.unpack_from("<I", data, off + 24 * i)[0]
                out.append(data[stroff + nm:data.index(b"\0", stroff + nm)].decode())
            return out
    return []


def normalize_info(blob, syms):
    """An .nv.info section with symbol indices replaced by the symbols' names."""
    out, i = [], 0
    while i + 4 <= len(blob):
        fmt, attr, size = blob[i], blob[i + 1], struct.unpack_from("<H", blob, i + 2)[0]
        if fmt != 0x04:  # EIFMT_SVAL has a size; the others a 2-byte value
            out.append(blob[i:i + 4])
            i += 4
            continue
        val = blob[i + 4:i + 4 + size]
        if attr in SYMBOL_ATTRS and size >= 4:
            k = struct.unpack_from("<I", val, 0)[0]
            val = (syms[k] if k < len(syms) else str(k)).encode() + b"@" + val[4:]
        out.append(bytes([fmt, attr]) + val)
        i += 4 + size
    return b"|".join(out)


def sections(path):
    """{name: bytes} of an ELF64 little-endian file (the cubin), .nv.info* normalized."""
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise ValueError(f"{path}: not an ELF64 file")
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    hdrs = []
    for i in range(shnum):
        name, typ, _flags, _addr, off, size, link = struct.unpack_from("<IIQQQQI", data, shoff + i * shentsize)
        hdrs.append((name, typ, off, size, link))
    stroff = hdrs[shstrndx][2]
    syms = symbol_names(data, hdrs, None)
    out = {}
    for name, typ, off, size, _link in hdrs:
        end = data.index(b"\0", stroff + name)
        n = data[stroff + name:end].decode()
        out[n] = b"" if typ == 8 else data[off:off + size]  # SHT_NOBITS: no bytes
        if n.startswith(".nv.info"):
            out[n] = normalize_info(out[n], syms)
    return out


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def resources(stderr):
    return [l.split("info    : ", 1)[-1] for l in stderr.splitlines() if "Used" in l or "spill" in l]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tl-opt", required=True)
    ap.add_argument("--ptxas", default=os.environ.get("TL_PTXAS", "/usr/local/cuda/bin/ptxas"))
    ap.add_argument("--target", action="append")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    targets = a.target or ["sm_80", "sm_90a"]
    same = differ = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for spec in a.files:
            f, *defs = spec.split("::")
            defs = [d for x in defs for d in x.split()]
            for t in targets:
                name = f"{os.path.basename(f)}{' ' + ' '.join(defs) if defs else ''} @{t}"
                cubins, res = [], []
                ok = True
                for tag, extra in (("g", []), ("g0", ["--no-line-info"])):
                    ptx, cub = f"{tmp}/{tag}.ptx", f"{tmp}/{tag}.cubin"
                    r = run([a.tl_opt, "--emit=ptx", f"--target={t}", *extra, *defs, f, "-o", ptx])
                    if r.returncode != 0:
                        why = [l for l in r.stderr.splitlines() if "error:" in l] or [r.stderr.strip()]
                        print(f"skip  {name}: tl-opt refuses it ({why[0].split('error: ', 1)[-1][:100]})")
                        ok = False
                        break
                    r = run([a.ptxas, f"-arch={t}", "-v", ptx, "-o", cub])
                    if r.returncode != 0:
                        print(f"FAIL  {name} ({tag}): ptxas: {r.stderr.strip()[:300]}")
                        failed += 1
                        ok = False
                        break
                    cubins.append(sections(cub))
                    res.append(resources(r.stderr))
                if not ok:
                    continue
                s1, s0 = cubins
                code1 = {k: v for k, v in s1.items() if not LINE_SECTIONS.search(k)}
                code0 = {k: v for k, v in s0.items() if not LINE_SECTIONS.search(k)}
                text = sum(len(v) for k, v in code0.items() if k.startswith(".text."))
                lines = [k for k in s1 if k not in s0]
                if code1 == code0 and res[0] == res[1]:
                    same += 1
                    print(f"same  {name}: {len(code0)} sections, .text {text} bytes identical; "
                          f"line info adds {', '.join(sorted(lines)) or 'nothing'}")
                else:
                    differ += 1
                    diff = sorted(k for k in set(code0) | set(code1) if code0.get(k) != code1.get(k))
                    print(f"DIFF  {name}: sections {', '.join(diff)}; resources {res[0]} vs {res[1]}")
    print(f"lineinfo-sass: {same} identical, {differ} differ, {failed} failed")
    return 0 if differ == 0 and failed == 0 and same > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
