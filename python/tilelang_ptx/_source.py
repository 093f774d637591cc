"""_source.py -- the text that libtilelang compiles for a @T.prim_func defined in Python.

Python never runs a kernel body.  For a PrimFunc we hand libtilelang a TileLang file made of
  * the function's own source lines, at their original line numbers and columns (so diagnostics
    name the user's file, line and column): lines 1..start-2 blank, then, for a function nested in a
    factory, `def _tl_factory():` on line start-1 and `    return <name>` after the body, so the
    front end elaborates it as a factory's prim_func; decorators other than @T.prim_func (the
    @tilelang.jit line: its options are passed through the C API) are blanked;
  * after it, `import tilelang` / `import tilelang.language as <alias>` for the aliases the
    function uses and one module constant `NAME = <literal>` per value the function reads from its
    closure or its module globals (ints, floats, bools, strings, None, dtypes, tuples/lists of
    them, T.dynamic symbols, T.GemmWarpPolicy members).  libtilelang evaluates module constants
    lazily, so their place after the function changes nothing.
Names used only in parameter annotations (`T.Buffer(A_shape, in_dtype)`, where A_shape is a local of
the factory and not in the closure) are bound from the function's evaluated __annotations__ by
matching the annotation's syntax against the recorded call (A_shape <- the shape it received); an
annotation that cannot be matched that way is replaced by the literal of its value.
The text is also the memoisation key: equal texts give the same compiled kernel.
For an eager-style function (build(func, eager=True): its whole source, decorators kept), EagerSignature
reads from the body's syntax what the call's tensors bind (its T.const symbols, the shapes of the parameter
annotations, the returned outputs); _eager.py binds them.
"""
import ast
import builtins
import enum
import inspect
import math
import symtable
import textwrap

from . import language as _lang


class CaptureError(TypeError):
    """A kernel reads a Python value that cannot be handed to the compiler."""


_SIMPLE = (bool, int, float, str, type(None))
_LANG_ALIAS = "_tl_T"


def _dtype_name(v):
    """The dtype name of a NumPy/PyTorch dtype (or dtype class), else None."""
    mod = type(v).__module__ or ""
    if mod.startswith("torch") and type(v).__name__ == "dtype":
        return str(v).split(".", 1)[1]
    if mod.startswith("numpy") and type(v).__name__.endswith("DType") or type(v).__name__ == "dtype":
        return getattr(v, "name", None)
    if isinstance(v, type) and (getattr(v, "__module__", "") or "").startswith("numpy"):
        try:
            import numpy
            return numpy.dtype(v).name
        except Exception:
            return None
    return None


def literal(v, t_alias=_LANG_ALIAS, where="value"):
    """v as TileLang source text libtilelang reads back; CaptureError for unsupported values."""
    if isinstance(v, _lang.DType):
        return repr(str(v))
    if isinstance(v, bool) or v is None:
        return repr(v)
    if isinstance(v, enum.Enum) and type(v).__name__ == "GemmWarpPolicy":  # tilelang.tileop.base's
        return f"{t_alias}.GemmWarpPolicy.{v.name}"
    if isinstance(v, int):
        return repr(int(v))
    if isinstance(v, float):
        if math.isfinite(v):
            return repr(v)
        raise CaptureError(f"{where} = {v!r}: only finite floats can be passed to the compiler")
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, (tuple, list)):
        items = [literal(x, t_alias, where) for x in v]
        if isinstance(v, list):
            return "[" + ", ".join(items) + "]"
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(v, _lang.Inert):
        s = f"{t_alias}.{v.path}"
        if v.items is not None:
            s += "[" + ", ".join(literal(x, t_alias, where) for x in v.items) + "]"
        if v.args is not None:
            parts = [literal(x, t_alias, where) for x in v.args]
            parts += [f"{k}={literal(x, t_alias, where)}" for k, x in v.kwargs.items()]
            s += "(" + ", ".join(parts) + ")"
        return s
    name = _dtype_name(v)
    if name:
        return repr(name)
    # NumPy scalars (numpy.int32(4), numpy.float32(0.5)) behave as Python numbers
    mod = type(v).__module__ or ""
    if mod.startswith("numpy") and hasattr(v, "item"):
        return literal(v.item(), t_alias, where)
    raise CaptureError(f"{where} is {type(v).__module__}.{type(v).__qualname__} ({_short(v)}); a kernel "
                       "can capture ints, floats, bools, strings, None, dtypes and tuples/lists of them")


def _short(v):
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


class _Info:
    """What the source of one function gives, computed once per code object."""

    def __init__(self, func, eager=False):
        self.name = func.__name__
        self.filename = inspect.getsourcefile(func) or func.__code__.co_filename
        try:
            lines, start = inspect.getsourcelines(func)
        except (OSError, TypeError) as e:
            raise CaptureError(f"cannot read the source of kernel '{func.__name__}' ({e}); define it in a "
                               "file, not in an interactive session or exec()") from None
        self.start = start
        self.lines = [l if l.endswith("\n") else l + "\n" for l in lines]
        first = self.lines[0]
        self.indent = len(first) - len(first.lstrip())
        tree = ast.parse(textwrap.dedent("".join(self.lines)))
        fdef = tree.body[0]
        if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
            raise CaptureError(f"kernel '{func.__name__}': its source does not start with a def")
        self.blank = set()      # 0-based indices into lines of decorator lines to blank
        self.deco_names = set()
        self.has_nested_prim_func = any(
            isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n is not fdef and
            any(_is_prim_func(d) for d in n.decorator_list) for n in ast.walk(fdef))
        has_prim = eager
        for d in fdef.decorator_list if not eager else ():
            if _is_prim_func(d):
                has_prim = True
                self.deco_names = _names(d)
            else:
                self.blank.update(range(d.lineno - 1, d.end_lineno))
        if eager:  # the whole @tilelang.jit function, decorators kept, for the eager front end --
            # except @tilelang.autotune(...): the package runs the search (autotuner.py)
            kept = []
            for d in fdef.decorator_list:
                if _is_autotune(d):
                    self.blank.update(range(d.lineno - 1, d.end_lineno))
                else:
                    kept.append(d)
            self.deco_names = set().union(*[_names(d) for d in kept])
        if not has_prim:
            raise CaptureError(f"kernel '{func.__name__}' is not decorated with @T.prim_func")
        # names the body reads from outside (closure or module globals)
        table = symtable.symtable(textwrap.dedent("".join(self.lines)), self.filename, "exec")
        ftab = next(c for c in table.get_children() if c.get_name() == fdef.name)
        self.body_names = sorted(_outer_names(ftab))
        # parameter annotations: (parameter name, annotation node, source span)
        a = fdef.args
        self.annotations = [(p.arg, p.annotation) for p in a.posonlyargs + a.args + a.kwonlyargs
                            if p.annotation is not None]
        self.eager_sig = EagerSignature(fdef) if eager and not self.has_nested_prim_func else None


class EagerSignature:
    """What the body of an eager-style kernel declares before its first `with T.Kernel` (the part
    libtilelang's front end runs at compile time, lib/Frontend/elab_eager.c):
      consts   the T.const symbols in order (`M, N, K = T.const("M, N, K")`, `N = T.const("N")`);
      tensors  {parameter: dims} for each parameter annotated in the body (`A: T.Tensor((M, K), dt)`,
               also T.Buffer / T.Tensor[...] / a shape tuple assigned to a name first), dims[i] the
               T.const symbol that dim i is exactly, else None; dims is None when the shape is not
               a tuple we can read;
      returns  the names of the `return C` / `return C, D` statement (the T.empty outputs), or None.
    Python reads this to bind the T.const symbols from the call's tensors; it evaluates nothing."""

    def __init__(self, fdef):
        body = fdef.body
        kstart = next((i for i, s in enumerate(body) if _is_kernel_with(s)), len(body))
        params = {p.arg for p in fdef.args.posonlyargs + fdef.args.args + fdef.args.kwonlyargs}
        self.consts, self.tensors, self.returns = [], {}, None
        var_sym, shapes = {}, {}
        for s in body[:kstart]:
            if isinstance(s, ast.Assign) and len(s.targets) == 1:
                t, v = s.targets[0], s.value
                syms = _const_symbols(v)
                if syms is not None:
                    self.consts += [x for x in syms if x not in self.consts]
                    if isinstance(t, ast.Name) and len(syms) == 1:
                        var_sym[t.id] = syms[0]
                    elif isinstance(t, (ast.Tuple, ast.List)) and len(t.elts) == len(syms):
                        for e, x in zip(t.elts, syms):
                            if isinstance(e, ast.Name):
                                var_sym[e.id] = x
                elif isinstance(t, ast.Name) and isinstance(v, (ast.Tuple, ast.List)):
                    shapes[t.id] = v
            elif isinstance(s, ast.AnnAssign) and s.value is None and isinstance(s.target, ast.Name) and \
                    s.target.id in params:
                shape = _annotation_shape(s.annotation)
                if isinstance(shape, ast.Name):
                    shape = shapes.get(shape.id)
                dims = None
                if isinstance(shape, (ast.Tuple, ast.List)):
                    dims = [var_sym.get(e.id) if isinstance(e, ast.Name) else None for e in shape.elts]
                self.tensors[s.target.id] = dims
        for s in body[kstart:]:
            if isinstance(s, ast.Return) and s.value is not None:
                items = s.value.elts if isinstance(s.value, ast.Tuple) else [s.value]
                self.returns = [e.id for e in items if isinstance(e, ast.Name)]
                break


def _is_kernel_with(s):
    if not isinstance(s, (ast.With, ast.AsyncWith)):
        return False
    for item in s.items:
        f = item.context_expr.func if isinstance(item.context_expr, ast.Call) else None
        if (isinstance(f, ast.Attribute) and f.attr == "Kernel") or (isinstance(f, ast.Name) and f.id == "Kernel"):
            return True
    return False


def _const_symbols(v):
    """The symbol names of a `T.const("M, N")` call, else None."""
    if not isinstance(v, ast.Call) or len(v.args) != 1 or not isinstance(v.args[0], ast.Constant) or \
            not isinstance(v.args[0].value, str):
        return None
    f = v.func
    if not ((isinstance(f, ast.Attribute) and f.attr == "const") or (isinstance(f, ast.Name) and f.id == "const")):
        return None
    return [x for x in v.args[0].value.replace(",", " ").split() if x]


def _annotation_shape(a):
    """The shape expression of T.Tensor(shape, dtype) / T.Buffer(...) / T.Tensor[shape, dtype]."""
    if isinstance(a, ast.Call):
        if a.args:
            return a.args[0]
        return next((k.value for k in a.keywords if k.arg == "shape"), None)
    if isinstance(a, ast.Subscript):
        sl = a.slice
        if isinstance(sl, ast.Tuple) and sl.elts and isinstance(sl.elts[0], (ast.Tuple, ast.List, ast.Name)):
            return sl.elts[0]
    return None


def _is_autotune(d):
    target = d.func if isinstance(d, ast.Call) else d
    return (isinstance(target, ast.Attribute) and target.attr == "autotune") or \
        (isinstance(target, ast.Name) and target.id == "autotune")


def _is_prim_func(d):
    target = d.func if isinstance(d, ast.Call) else d
    return (isinstance(target, ast.Attribute) and target.attr == "prim_func") or \
        (isinstance(target, ast.Name) and target.id == "prim_func")


def _names(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _outer_names(tab, local=frozenset()):
    """Names a function scope (and scopes nested in it) reads that it does not define."""
    out = set()
    mine = set(local)
    for s in tab.get_symbols():
        if s.is_assigned() or s.is_parameter() or s.is_imported() or s.is_namespace():
            mine.add(s.get_name())
    for s in tab.get_symbols():
        n = s.get_name()
        if s.is_referenced() and n not in mine and (s.is_global() or s.is_free()):
            out.add(n)
    for c in tab.get_children():
        out |= _outer_names(c, frozenset(mine))
    return out


_infos = {}


def info(func, eager=False):
    i = _infos.get((func.__code__, eager))
    if i is None:
        i = _infos[(func.__code__, eager)] = _Info(func, eager)
    return i


def is_eager(func):
    """True for a @tilelang.jit function in TileLang's eager style: no @T.prim_func inside it (its
    parameters are the tensors; T.const/T.empty in its body).  False when its source is unreadable."""
    try:
        return not info(func, eager=True).has_nested_prim_func
    except (CaptureError, SyntaxError):
        return False


_MISSING = object()


def _lookup(func, name):
    code = func.__code__
    if name in code.co_freevars:
        try:
            return func.__closure__[code.co_freevars.index(name)].cell_contents
        except ValueError:  # an empty cell: let the front end say the name is undefined
            return _MISSING
    if name in func.__globals__:
        return func.__globals__[name]
    return _MISSING


def eager_signature(func):
    """The EagerSignature of an eager-style @tilelang.jit function."""
    return info(func, eager=True).eager_sig


def _match(node, value, out):
    """Binds the bare names of annotation syntax `node` to the parts of its evaluated `value`."""
    if isinstance(node, ast.Name):
        out.setdefault(node.id, value)
    elif isinstance(node, (ast.Tuple, ast.List)) and isinstance(value, (tuple, list)) and \
            len(node.elts) == len(value):
        for n, v in zip(node.elts, value):
            _match(n, v, out)
    elif isinstance(node, ast.Call) and isinstance(value, _lang.Inert) and value.args is not None:
        for n, v in zip(node.args, value.args):
            _match(n, v, out)
        for k in node.keywords:
            if k.arg in value.kwargs:
                _match(k.value, value.kwargs[k.arg], out)
    elif isinstance(node, ast.Subscript) and isinstance(value, _lang.Inert) and value.items is not None:
        elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for n, v in zip(elts, value.items):
            _match(n, v, out)


def build(func, eager=False):
    """(text, filename) of the TileLang file for PrimFunc.func `func` (eager: for the whole eager-style
    @tilelang.jit function, its decorators kept); CaptureError on bad captures."""
    text, consts, filename = build_parts(func, eager)
    return text + "".join(f"{n} = {v}\n" for n, v in consts), filename


def build_parts(func, eager=False):
    """build()'s file as (text without the module constants, [(name, literal)] of the constants the
    kernel reads, filename): the constants are what a factory's arguments change, and as -D bindings
    (which bind module constants too) they make one text serve several configurations."""
    inf = info(func, eager)
    module_lines, consts, resolved = [], [], {}

    def bind(name, value, why):
        if name in resolved or hasattr(builtins, name) and value in (_MISSING, getattr(builtins, name)):
            return  # a builtin (int, float, len, ...): the front end knows it by name
        resolved[name] = True
        if value is _MISSING:
            return  # an undefined name: libtilelang reports it at its use
        if value is _lang or (inspect.ismodule(value) and value.__name__ == "tilelang.language"):
            module_lines.append(f"import tilelang.language as {name}")
        elif inspect.ismodule(value) and value.__name__.split(".")[0] in ("tilelang_ptx", "tilelang"):
            module_lines.append(f"import tilelang as {name}" if name != "tilelang" else "import tilelang")
        elif inspect.ismodule(value):
            module_lines.append(f"import {value.__name__} as {name}")
        else:
            where = f"kernel '{inf.name}' {why} '{name}', which"
            consts.append((name, literal(value, _LANG_ALIAS, where)))

    for name in inf.body_names:
        v = _lookup(func, name)
        if v is _MISSING and hasattr(builtins, name):
            continue
        bind(name, v, "reads")
    for name in sorted(inf.deco_names):
        bind(name, _lookup(func, name), "reads")
    # annotations: match their syntax against the evaluated values
    evaluated = getattr(func, "__annotations__", {}) or {}
    lines = list(inf.lines)
    for pname, node in inf.annotations:
        got = {}
        if pname in evaluated:
            _match(node, evaluated[pname], got)
        unresolved = False
        for n in sorted(_names(node)):
            if n in resolved:
                continue
            v = _lookup(func, n)
            if v is _MISSING and n in got:
                v = got[n]
            if v is _MISSING:
                unresolved = True
                continue
            bind(n, v, "uses in an annotation")
        if unresolved and pname in evaluated:
            _replace(lines, inf, node, literal(evaluated[pname], _LANG_ALIAS,
                                               f"the annotation of parameter '{pname}'"))
    for i in inf.blank:
        lines[i] = "\n"
    head = []
    if inf.indent:
        if inf.start < 2:
            raise CaptureError(f"kernel '{inf.name}': cannot place its source at line {inf.start}")
        head = ["\n"] * (inf.start - 2) + ["def _tl_factory():\n"]
        tail = [" " * inf.indent + f"return {inf.name}\n"]
    else:
        head = ["\n"] * (inf.start - 1)
        tail = []
    imports = [f"import tilelang.language as {_LANG_ALIAS}\n"] + [l + "\n" for l in dict.fromkeys(module_lines)]
    pad = len(head) - (1 if inf.indent else 0)  # blank lines above the function
    if len(imports) <= pad:
        # before the function, in its blank padding (line numbers kept): decorators such as
        # @tilelang.jit are evaluated where the function is defined, so their names must be bound
        head[:len(imports)] = imports
    else:
        tail += imports
    return "".join(head + lines + tail), consts, inf.filename


def _replace(lines, inf, node, text):
    """Replaces annotation `node`'s text (positions in the dedented source) with `text`, keeping the
    number of lines."""
    l0, l1 = node.lineno - 1, node.end_lineno - 1
    c0, c1 = node.col_offset + inf.indent, node.end_col_offset + inf.indent
    if l0 == l1:
        s = lines[l0]
        lines[l0] = s[:c0] + text + s[c1:]
    else:
        lines[l0] = lines[l0][:c0] + text + lines[l1][c1:]
        for i in range(l0 + 1, l1 + 1):
            lines[i] = "\n"
