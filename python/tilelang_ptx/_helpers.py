"""_helpers.py -- Python functions a kernel calls at compile time, handed to libtilelang as source.

A kernel (or an eager @tilelang.jit function) may call functions of its file: module-level helpers
(`make_dq_layout(dQ)`, `is_pow_of_2(n)`), functions local to its factory, and @T.macro functions.
libtilelang evaluates them as compile-time Python (a macro is inlined as TileLang does), so their
source goes into the TileLang file that _source.build makes, each at its own line numbers (the
file's diagnostics name the user's lines):
  * a function of the kernel's own top-level statement (its factory) goes into the `_tl_factory`
    wrapper, whose `def` line moves above the first of them;
  * any other function stays at module level;
  * a function more indented than its block gets an `if True:` on the line above it.
  * a function of another file of the user's program (a sibling module's helper, `from quantize import
    f`) goes after the file's last line, below a line directive `#@tl-line LINE PATH` (lib/Frontend/lexer.c)
    naming its own file and first line, so that diagnostics inside it name that file's lines; a second
    directive hands the lines after it back to the kernel's file.  Functions of Python's library, of
    installed packages and of this package are not user code: a kernel calling one stops at the call
    (stub()).
Decorators other than @T.macro are blanked.  What the function reads from outside (module globals of its
own module, its closure) is bound like the kernel's captures (constants, imports, further helpers), in
the one namespace of the file we hand over: a name that two functions read with different values is a
CaptureError.  A function whose source cannot be read is a CaptureError naming it.
"""
import ast
import inspect
import linecache
import textwrap

_files = {}


def is_helper(v):
    """A plain Python function (a @T.macro is one: T.macro returns the function)."""
    return inspect.isfunction(v) and v.__name__ != "<lambda>"


def _top_ranges(filename):
    """[(first line, last line)] of the module-level statements of filename (decorators included)."""
    r = _files.get(filename)
    if r is None:
        try:
            tree = ast.parse("".join(linecache.getlines(filename)))
        except SyntaxError:
            tree = ast.Module(body=[], type_ignores=[])
        r = _files[filename] = [(min([s.lineno] + [d.lineno for d in getattr(s, "decorator_list", [])]),
                                 s.end_lineno) for s in tree.body]
    return r


def foreign(func, kernel_file):
    """Whether func is defined in a file other than kernel_file (its source cannot go with the kernel's)."""
    try:
        f = inspect.getsourcefile(func) or func.__code__.co_filename
    except TypeError:
        return False
    return f != kernel_file


def _library_dirs():
    import os
    import sysconfig
    paths = sysconfig.get_paths()
    dirs = {paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    dirs.add(os.path.dirname(os.path.abspath(__file__)))  # this package's own functions
    return tuple(os.path.join(os.path.realpath(d), "") for d in dirs if d)


def capturable(func):
    """Whether func (of another file than the kernel's) is the user's code whose source can go with the
    kernel's: not a function of Python's library, of an installed package or of this package."""
    import os
    try:
        f = inspect.getsourcefile(func)
    except TypeError:
        return False
    return bool(f) and os.path.isfile(f) and not os.path.realpath(f).startswith(_library_dirs())


def put_foreign(out, h, kernel_file):
    """Appends helper h of another file to out (the file's lines after its last): a line directive with
    h's file and first line, h's lines (below `if True:` when it is indented), and a directive giving the
    lines after it back to kernel_file at their own numbers."""
    if h.indent:
        out.append("if True:\n")
    out.append(f"#@tl-line {h.start} {h.filename}\n")
    out += h.lines
    out.append(f"#@tl-line {len(out) + 2} {kernel_file}\n")


def stub(name, func, kernel_file):
    """Lines defining `name` as a function that stops the compile where a kernel calls it: func (of another
    file) cannot be handed to libtilelang, whose input is the kernel's one file."""
    import os
    where = inspect.getsourcefile(func) or func.__code__.co_filename
    try:
        where = os.path.relpath(where, os.path.dirname(kernel_file))
    except ValueError:
        pass
    msg = (f"function '{func.__name__}' is defined in {where}: a kernel can call at compile time only the "
           f"functions of its own file ({os.path.basename(kernel_file)}); define it there")
    return [f"def {name}(*args, **kwargs):\n", f"    assert False, {msg!r}\n"]


class Helper:
    """One function's source: start (1-based first line), lines (decorators other than @T.macro
    blanked), indent, and the names it reads from outside."""

    def __init__(self, func, capture_error):
        self.func = func
        self.name = func.__name__
        try:
            lines, start = inspect.getsourcelines(func)
        except (OSError, TypeError) as e:
            raise capture_error(f"cannot read the source of function '{self.name}' ({e}), which a kernel "
                                "calls at compile time; define it in a file") from None
        self.filename = inspect.getsourcefile(func) or func.__code__.co_filename
        self.start = start
        self.lines = [l if l.endswith("\n") else l + "\n" for l in lines]
        self.indent = len(self.lines[0]) - len(self.lines[0].lstrip())
        src = textwrap.dedent("".join(self.lines))
        fdef = ast.parse(src).body[0]
        for d in fdef.decorator_list:
            t = d.func if isinstance(d, ast.Call) else d
            if not ((isinstance(t, ast.Attribute) and t.attr == "macro") or
                    (isinstance(t, ast.Name) and t.id == "macro")):
                for i in range(d.lineno - 1, d.end_lineno):
                    self.lines[i] = "\n"
        from ._source import _outer_names
        import symtable
        table = symtable.symtable(src, self.filename, "exec")
        ftab = next(c for c in table.get_children() if c.get_name() == fdef.name)
        # the body's free names, and those of its decorators and parameter defaults
        outer = {n.id for e in fdef.decorator_list + fdef.args.defaults + fdef.args.kw_defaults
                 if e is not None for n in ast.walk(e) if isinstance(n, ast.Name)}
        self.names = sorted(_outer_names(ftab) | outer)

    @property
    def end(self):
        return self.start + len(self.lines) - 1


def place(helpers, kernel_file, kstart, kend, kindent, capture_error):
    """Where each helper goes: (factory_helpers, module_helpers, other_files_helpers) for a kernel at lines
    kstart..kend (its indent kindent, > 0 when it is nested in a factory).  CaptureError for a helper
    that cannot be placed at its lines."""
    ranges = _top_ranges(kernel_file)
    top = next(((a, b) for a, b in ranges if a <= kstart <= b), None)
    fac, mod, other = [], [], []
    for h in helpers:
        if h.filename != kernel_file:
            other.append(h)
            continue
        if h.start <= kend and h.end >= kstart:
            raise capture_error(f"function '{h.name}' overlaps the kernel's lines")
        inside = kindent and top is not None and top[0] <= h.start <= top[1]
        if inside and (h.start > kstart or h.indent < kindent):
            raise capture_error(f"function '{h.name}' (line {h.start}), which the kernel calls at compile "
                                "time, must be defined before the kernel and not less indented than it")
        (fac if inside else mod).append(h)
    return (sorted(fac, key=lambda h: h.start), sorted(mod, key=lambda h: h.start),
            sorted(other, key=lambda h: (h.filename, h.start)))


def put(out, h, block_indent, capture_error):
    """Writes helper h into out (a list of lines, index = line - 1, grown as needed) at its lines,
    with `if True:` above it when it is more indented than its block."""
    last = h.end
    while len(out) < last:
        out.append("\n")
    need_if = h.indent > block_indent
    first = h.start - (2 if need_if else 1)
    if first < 0 or any(out[i] != "\n" for i in range(first, last)):
        raise capture_error(f"function '{h.name}' (line {h.start}), which a kernel calls at compile time, "
                            "has no free line above it; put a blank line before its definition")
    if need_if:
        out[h.start - 2] = " " * block_indent + "if True:\n"
    out[h.start - 1:last] = h.lines
