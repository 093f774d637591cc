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

from . import cuda_intrinsics as _cuda_intrinsics
from . import _helpers
from . import _hostcalls
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
                    # pass_configs= the package applies itself (jit._flags: this compiler's keys as flags,
                    # TileLang's others as a warning), so libtilelang reads an empty dict
                    for k in d.keywords if isinstance(d, ast.Call) else ():
                        if k.arg == "pass_configs":
                            _hostcalls.replace_span(self.lines, self.indent, k.value, "{}")
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
               a tuple we can read, a ShapeChoice when it is `X if cond else Y` (resolve_dims picks);
      returns  the names of the `return C` / `return C, D` statement (the T.empty outputs), or None.
    Names aliasing a T.const symbol (`KH, KW = K, K`, `KK = K`) stand for it in shapes; a name bound to a
    shape display, or to a conditional expression between displays, stands for that shape.
    Python reads this to bind the T.const symbols from the call's tensors; it evaluates nothing here."""

    def __init__(self, fdef):
        body = fdef.body
        kstart = next((i for i, s in enumerate(body) if _is_kernel_with(s)), len(body))
        params = {p.arg for p in fdef.args.posonlyargs + fdef.args.args + fdef.args.kwonlyargs}
        self.consts, self.tensors, self.returns = [], {}, None
        var_sym, shapes = {}, {}  # name -> T.const symbol; name -> shape expression (display or IfExp)

        def forget(target):  # a name assigned something we do not follow no longer stands for anything
            for n in ast.walk(target):
                if isinstance(n, ast.Name):
                    var_sym.pop(n.id, None)
                    shapes.pop(n.id, None)

        def shape_expr(v):
            if isinstance(v, ast.Name) and v.id in shapes:
                return shapes[v.id]
            if isinstance(v, (ast.Tuple, ast.List)) or (isinstance(v, ast.IfExp) and _is_shape_choice(v, shapes)):
                return v
            return None

        for s in body[:kstart]:
            if isinstance(s, ast.Assign):
                v, syms = s.value, _const_symbols(s.value)
                for t in s.targets:
                    if syms is not None:
                        forget(t)
                        if isinstance(t, ast.Name) and len(syms) == 1:
                            var_sym[t.id] = syms[0]
                        elif isinstance(t, (ast.Tuple, ast.List)) and len(t.elts) == len(syms):
                            for e, x in zip(t.elts, syms):
                                if isinstance(e, ast.Name):
                                    var_sym[e.id] = x
                        continue
                    # aliases: `KK = K`, `KH, KW = K, K` (read before any of the targets is rebound)
                    pairs = [(t, v)]
                    if isinstance(t, (ast.Tuple, ast.List)) and isinstance(v, (ast.Tuple, ast.List)) and \
                            len(t.elts) == len(v.elts) and not any(isinstance(e, ast.Starred) for e in t.elts + v.elts):
                        pairs = list(zip(t.elts, v.elts))
                    new = []
                    for te, ve in pairs:
                        if isinstance(te, ast.Name) and isinstance(ve, ast.Name) and ve.id in var_sym:
                            new.append((te.id, "sym", var_sym[ve.id]))
                        elif isinstance(te, ast.Name) and shape_expr(ve) is not None:
                            new.append((te.id, "shape", shape_expr(ve)))
                        else:
                            new.append((te, None, None))
                    for name, kind, val in new:
                        forget(name if kind is None else ast.Name(id=name))
                    for name, kind, val in new:
                        if kind == "sym":
                            var_sym[name] = val
                        elif kind == "shape":
                            shapes[name] = val
                if syms is not None:
                    self.consts += [x for x in syms if x not in self.consts]
            elif isinstance(s, ast.AnnAssign) and s.value is None and isinstance(s.target, ast.Name) and \
                    s.target.id in params:
                shape = _annotation_shape(s.annotation)
                if isinstance(shape, ast.Name):
                    shape = shapes.get(shape.id)
                self.tensors[s.target.id] = _shape_dims(shape, var_sym, shapes)
            elif isinstance(s, (ast.AugAssign, ast.AnnAssign)):
                forget(s.target)
        for s in body[kstart:]:
            if isinstance(s, ast.Return) and s.value is not None:
                items = s.value.elts if isinstance(s.value, ast.Tuple) else [s.value]
                self.returns = [e.id for e in items if isinstance(e, ast.Name)]
                break


class ShapeChoice:
    """A shape `X if cond else Y`: resolve_dims evaluates cond with the call's non-tensor parameters."""

    def __init__(self, cond, then, orelse):
        self.cond = cond
        self.code = compile(ast.fix_missing_locations(ast.Expression(body=_strip_pos(cond))), "<shape>", "eval")
        self.names = sorted(_names(cond))
        self.then, self.orelse = then, orelse


def _strip_pos(node):
    return ast.parse(ast.unparse(node), mode="eval").body


# the syntax a shape's condition may use: names, constants and operators, nothing that calls or looks up
_COND_NODES = (ast.Name, ast.Load, ast.Constant, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub,
               ast.UAdd, ast.Compare, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Is, ast.IsNot,
               ast.In, ast.NotIn, ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.Tuple,
               ast.IfExp)


def _is_shape_choice(v, shapes):
    """Whether IfExp `v` chooses between shapes (displays, names of shapes, nested choices)."""
    for b in (v.body, v.orelse):
        if isinstance(b, ast.IfExp):
            if not _is_shape_choice(b, shapes):
                return False
        elif not (isinstance(b, (ast.Tuple, ast.List)) or (isinstance(b, ast.Name) and b.id in shapes)):
            return False
    return True


def _shape_dims(shape, var_sym, shapes):
    """dims of a shape expression: a list (symbol or None per dim), a ShapeChoice, or None."""
    if isinstance(shape, ast.Name):
        shape = shapes.get(shape.id)
    if isinstance(shape, (ast.Tuple, ast.List)):
        return [var_sym.get(e.id) if isinstance(e, ast.Name) else None for e in shape.elts]
    if isinstance(shape, ast.IfExp) and _is_shape_choice(shape, shapes):
        if not all(isinstance(n, _COND_NODES) for n in ast.walk(shape.test)):
            return None
        return ShapeChoice(shape.test, _shape_dims(shape.body, var_sym, shapes),
                           _shape_dims(shape.orelse, var_sym, shapes))
    return None


_NO_VALUE = object()


def resolve_dims(dims, values):
    """dims (EagerSignature.tensors[p]) for a call: a ShapeChoice's condition evaluated with `values`
    (the call's non-tensor parameters by name); None when it reads anything else or fails."""
    while isinstance(dims, ShapeChoice):
        ns = {}
        for n in dims.names:
            v = values.get(n, _NO_VALUE)
            if v is _NO_VALUE:
                return None
            ns[n] = v
        try:
            cond = bool(eval(dims.code, {"__builtins__": {}}, ns))  # noqa: S307 - names, constants, operators
        except Exception:  # noqa: BLE001 - cannot be evaluated: the shape stays unknown
            return None
        dims = dims.then if cond else dims.orelse
    return dims


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


_MISSING = _hostcalls.MISSING  # a name with no value (shared with _hostcalls)


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
    module_lines, consts, resolved, helpers, stubs = [], [], {}, {}, []
    # host calls Python evaluates now (driver.get_num_sms(), a helper asking torch.cuda): _hostcalls.py
    lines = list(inf.lines)
    unread = _hostcalls.fold(func, lines, inf.indent, set(inf.body_names), _lookup,
                             lambda v, where: literal(v, _LANG_ALIAS, where), CaptureError)

    def bind(name, value, why):
        if name in resolved:
            if not _same(resolved[name], value):  # a helper reads another value of a kernel's name
                raise CaptureError(f"kernel '{inf.name}' {why} '{name}', which is bound to another value "
                                   "where the kernel or another function it calls reads it; rename one")
            return
        if hasattr(builtins, name) and value in (_MISSING, getattr(builtins, name)):
            return  # a builtin (int, float, len, ...): the front end knows it by name
        resolved[name] = value
        if value is _MISSING:
            return  # an undefined name: libtilelang reports it at its use
        if value is _lang or (inspect.ismodule(value) and value.__name__ == "tilelang.language"):
            module_lines.append(f"import tilelang.language as {name}")
        elif inspect.ismodule(value) and value.__name__ in ("tilelang_ptx.tvm", "tilelang.tvm"):
            module_lines.append(f"from tilelang import tvm as {name}")  # `from tilelang import tvm as tvm`
        elif inspect.ismodule(value) and value.__name__.split(".")[0] in ("tilelang_ptx", "tilelang"):
            module_lines.append(f"import tilelang as {name}" if name != "tilelang" else "import tilelang")
        elif inspect.ismodule(value):
            module_lines.append(f"import {value.__name__} as {name}")
        elif _tvm_name(value):  # tvm.tirx / tvm.tir / tvm.DataType: the front end knows them (elab_tvm.c)
            module_lines.append(f"from tvm import {_tvm_name(value)} as {name}")
        elif _decorator_name(value):  # `from tilelang import jit` above an eager kernel: the front end's decorator
            module_lines.append(f"from tilelang import {_decorator_name(value)} as {name}")
        elif _helpers.is_helper(value) and _helpers.foreign(value, inf.filename) and \
                not _helpers.capturable(value):
            # a function of Python's library or an installed package: not compile-time code we can read,
            # so a stub that stops the compile where the kernel reaches it, and only there (a branch the
            # kernel does not take may name it)
            stubs.append(_helpers.stub(name, value, inf.filename))
        elif _helpers.is_helper(value):  # its source goes with the kernel's (_helpers.py)
            if value.__code__ not in helpers:
                h = helpers[value.__code__] = _helpers.Helper(value, CaptureError)
                for n in h.names:
                    v = _lookup(value, n)
                    if not (v is _MISSING and hasattr(builtins, n)):
                        bind(n, v, f"calls '{h.name}', which reads")
            if name != value.__name__:  # read under another name (f = make_f()): an alias
                module_lines.append(f"{name} = {value.__name__}")
        elif isinstance(value, _cuda_intrinsics.TensorCoreIntrinEmitter):  # built in a factory: rebuilt by the
            module_lines.append(value.IMPORT)                               # kernel's source (elab_prelude.c)
            consts.append((name, value._tl_literal(lambda a: literal(a, _LANG_ALIAS, f"kernel '{inf.name}' {why} "
                                                                     f"'{name}', whose argument"))))
        elif _package_object(value):  # tvm.DataType, a carver function: libtilelang knows it by its path
            mod = "tilelang" + value.__module__[len("tilelang_ptx"):]
            module_lines.append(f"from {mod} import {value.__qualname__} as {name}")
        else:
            where = f"kernel '{inf.name}' {why} '{name}', which"
            consts.append((name, literal(value, _LANG_ALIAS, where)))

    for name in inf.body_names:
        if name in unread:
            continue
        v = _lookup(func, name)
        if v is _MISSING and hasattr(builtins, name):
            continue
        bind(name, v, "reads")
    for name in sorted(inf.deco_names):
        bind(name, _lookup(func, name), "reads")
    # annotations: match their syntax against the evaluated values
    evaluated = getattr(func, "__annotations__", {}) or {}
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
    kend = inf.start + len(lines) - 1
    _one_name_each(helpers.values(), resolved, inf.filename)
    fac, mod, other = _helpers.place(list(helpers.values()), inf.filename, inf.start, kend, inf.indent, CaptureError)
    if inf.indent:
        head = ["\n"] * (inf.start - 1)
        for h in fac:  # the factory's functions the kernel calls, in the wrapper before it
            _helpers.put(head, h, inf.indent, CaptureError)
        wrap = next((i for i, l in enumerate(head) if l != "\n"), len(head)) - 1  # the wrapper's def
        if wrap < 0:
            raise CaptureError(f"kernel '{inf.name}': cannot place its source at line {inf.start}")
        head[wrap] = "def _tl_factory():\n"
        tail = [" " * inf.indent + f"return {inf.name}\n"]
    else:
        head = ["\n"] * (inf.start - 1)
        tail = []
    for h in mod:  # module-level functions, before or after the kernel, at their lines
        if h.start < inf.start:
            _helpers.put(head, h, 0, CaptureError)
        else:
            after = ["\n"] * kend + tail
            _helpers.put(after, h, 0, CaptureError)
            tail = after[kend:]
    imports = [f"import tilelang.language as {_LANG_ALIAS}\n"] + [l + "\n" for l in dict.fromkeys(module_lines)]
    # blank lines above the function and everything placed before it
    pad = next((i for i, l in enumerate(head) if l != "\n"), len(head))
    if len(imports) <= pad:
        # before the function, in its blank padding (line numbers kept): decorators such as
        # @tilelang.jit are evaluated where the function is defined, so their names must be bound
        head[:len(imports)] = imports
    else:
        tail += imports
    if stubs:  # after the file's last line: they have no lines of their own
        import linecache
        tail += ["\n"] * max(0, len(linecache.getlines(inf.filename)) - len(head) - len(lines) - len(tail))
        for st in stubs:
            tail += st
    if other:  # functions of the user's other files, each under a directive naming its file (_helpers.py)
        out = head + lines + tail
        for h in other:
            _helpers.put_foreign(out, h, inf.filename)
        tail = out[len(head) + len(lines):]
    return "".join(head + lines + tail), consts, inf.filename


def _one_name_each(helpers, resolved, kernel_file):
    """CaptureError when a function of another file would define a name that another function or value of
    the handed-over file has (its `def` at the end would replace that one, silently)."""
    by_name = {}
    for h in helpers:
        by_name.setdefault(h.name, []).append(h)
    for name, hs in by_name.items():
        other = [h for h in hs if h.filename != kernel_file]
        if not other:
            continue
        h = other[0]
        clash = next((g for g in hs if g is not h), None)
        v = resolved.get(name, h.func)
        if clash is not None or (v is not h.func and v is not _MISSING):
            where = f"{clash.filename}:{clash.start}" if clash is not None else f"a value the kernel reads ({_short(v)})"
            raise CaptureError(f"function '{name}' of {h.filename}:{h.start}, which a kernel calls at compile "
                               f"time, has the name of another function or value it reads ({where}); "
                               "import one under another name")


def _tvm_name(v):
    """The name in `tvm` of a TVM namespace (tirx, tir) or of tvm.DataType, else None."""
    from . import tvm as _tvm
    if isinstance(v, _tvm._Namespace):
        return v._name
    if v is _tvm.DataType:
        return "DataType"
    return None


def _same(a, b):
    """Whether two captured values are the same for the compiler."""
    if a is b:
        return True
    plain = _SIMPLE + (tuple, list, _lang.Inert)
    try:
        return type(a) is type(b) and isinstance(a, plain) and bool(a == b)
    except Exception:
        return False


def _replace(lines, inf, node, text):
    """Replaces annotation `node`'s text (positions in the dedented source) with `text`, keeping the
    number of lines."""
    _hostcalls.replace_span(lines, inf.indent, node, text)


def _decorator_name(v):
    """'jit' / 'autotune' for this package's decorators (read under a bare name: `from tilelang import
    jit`, `@jit(...)`), else None."""
    mod = getattr(v, "__module__", None) or ""
    name = getattr(v, "__qualname__", "")
    if inspect.isfunction(v) and (mod, name) in (("tilelang_ptx.jit", "jit"), ("tilelang_ptx.autotuner", "autotune")):
        return name
    return None


def _package_object(v):
    """A class or function of this package outside its language (tilelang.tvm.DataType, ...)."""
    mod = getattr(v, "__module__", None) or ""
    return (inspect.isclass(v) or inspect.isfunction(v)) and mod.startswith("tilelang_ptx.") and \
        not mod.startswith("tilelang_ptx.language") and "." not in getattr(v, "__qualname__", ".")
