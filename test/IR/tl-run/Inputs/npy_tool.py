"""A small .npy writer and reader for tl-run's --input / --save tests, in the
standard library only (the tests must not need NumPy, and must not trust
tl-run's own reader and writer to check each other).  The header is read
with ast.literal_eval, as NumPy does.

  npy_tool.py write FILE DESCR SHAPE EXPR [--fortran] [--version=2]
      SHAPE: 8,16 (or "" for a 0-d array); EXPR: a Python expression of the
      flat index i giving each element (booleans and integers as they are,
      floats packed as the descr says; '<u2' and '|u1' take raw bits).
  npy_tool.py dump FILE          the header, then every element, one a line
  npy_tool.py header FILE        the header only
  npy_tool.py check FILE EXPR    every element == EXPR(i) exactly: "ok N" or the first mismatch
  npy_tool.py stats FILE         "min=... max=... distinct=..." of the elements
"""
import ast
import math
import struct
import sys

FORMATS = {"f2": "e", "f4": "f", "f8": "d", "i1": "b", "i2": "h", "i4": "i", "i8": "q",
           "u1": "B", "u2": "H", "u4": "I", "u8": "Q", "b1": "?"}


def fmt(descr):
    order = ">" if descr[0] == ">" else "<"
    return order, FORMATS[descr[1:]]


def write(path, descr, shape, expr, fortran=False, version=1):
    dims = tuple(int(x) for x in shape.split(",") if x)
    n = math.prod(dims)
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %r, }" % (descr, fortran, dims)
    pre = 10 if version == 1 else 12
    total = (pre + len(header) + 1 + 63) // 64 * 64
    header = header + " " * (total - pre - len(header) - 1) + "\n"
    order, code = fmt(descr)
    data = b"".join(struct.pack(order + code, eval(expr, {"math": math, "struct": struct}, {"i": i})) for i in range(n))
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY" + bytes([version, 0]))
        f.write(struct.pack("<H" if version == 1 else "<I", len(header)))
        f.write(header.encode("latin1"))
        f.write(data)


def read(path):
    with open(path, "rb") as f:
        raw = f.read()
    assert raw[:6] == b"\x93NUMPY", "bad magic"
    if raw[6] == 1:
        hlen, start = struct.unpack("<H", raw[8:10])[0], 10
    else:
        hlen, start = struct.unpack("<I", raw[8:12])[0], 12
    assert (start + hlen) % 64 == 0, "data not 64-byte aligned"
    header = ast.literal_eval(raw[start:start + hlen].decode("latin1"))
    order, code = fmt(header["descr"])
    n = math.prod(header["shape"])
    size = struct.calcsize(code)
    data = raw[start + hlen:]
    assert len(data) == n * size, "data is %d bytes, expected %d" % (len(data), n * size)
    return header, list(struct.unpack(order + code * n, data))


def main(argv):
    cmd = argv[1]
    if cmd == "write":
        opts = [a for a in argv[2:] if a.startswith("--")]
        args = [a for a in argv[2:] if not a.startswith("--")]
        write(*args, fortran="--fortran" in opts, version=2 if "--version=2" in opts else 1)
        return 0
    header, vals = read(argv[2])
    if cmd in ("dump", "header"):
        print("descr=%s fortran_order=%s shape=%s" % (header["descr"], header["fortran_order"], header["shape"]))
        for v in vals if cmd == "dump" else []:
            print(repr(v))
    elif cmd == "check":
        for i, v in enumerate(vals):
            want = eval(argv[3], {"math": math, "struct": struct}, {"i": i})
            if v != want:
                print("mismatch at %d: got %r expected %r" % (i, v, want))
                return 1
        print("ok %d" % len(vals))
    elif cmd == "stats":
        print("min=%r max=%r distinct=%d" % (min(vals), max(vals), len(set(vals))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
