"""python -m tilelang_ptx FILE [ARGS...] -- runs a TileLang program unchanged on this project: FILE runs as
__main__ with sys.argv = [FILE, ARGS...], its folder on sys.path, and `tilelang` (every `tilelang.*`
module, and `tvm`) meaning tilelang_ptx for this process, whether or not the real TileLang is installed.
The exit status is the program's (an uncaught exception: 1, with its traceback).
--remarks (before FILE): each compile says which path its T.Pipelined GEMM or attention loops took and why
(as CompileWarnings on stderr)."""
import sys


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        print("\nusage: python -m tilelang_ptx [--remarks] FILE [ARGS...]")
        return 0 if argv else 2
    if argv[0] == "--remarks":
        from .jit import set_remarks
        set_remarks(True)
        return main(argv[1:])
    from .files import run_file
    run_file(argv[0], argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
