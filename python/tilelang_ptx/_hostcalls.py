"""_hostcalls.py -- host calls in a kernel's source that Python evaluates when the kernel is captured.

TileLang runs a kernel factory (and the compile-time part of an eager function) as Python, so a host
query there -- `driver.get_num_sms()`, a helper such as `check_hopper()` that asks torch.cuda about the
device -- is just a value.  libtilelang evaluates compile-time Python itself but has no device, torch or
ctypes; such a call is evaluated here instead, once per capture, and its source text is replaced by the
literal of its value (columns after it on its line move; lines do not).

A call is folded when
  * its callee is a name the function reads from outside (closure or module globals), or an attribute
    chain of one, and that value is a *host function*: a function of another library (torch, numpy, ...),
    one of this package's host-query modules (carver, utils, contrib, env), or a function of the kernel's
    file that reads such host state (directly or through the functions it calls) and is not a @T.macro;
  * every argument is a capture-time constant: a literal, a name read from outside, an attribute chain of
    one, or tuples/lists/arithmetic of these (a parameter of the function or a local is not: its value
    is known only when libtilelang elaborates);
  * its value is one a kernel can capture (_source.literal); otherwise the call stays for libtilelang.
A folded call that raises is a CaptureError naming the call and the exception (TileLang would raise it).
Calls of TileLang's language (T.*), builtins, math and itertools stay: libtilelang evaluates them.
"""
import ast
import inspect
import textwrap

from . import _helpers

# modules of this package whose functions answer host questions (the device, the environment)
_HOST_PARTS = ("carver", "utils", "contrib", "env")
# modules libtilelang evaluates itself (compile-time Python)
_COMPILER_ROOTS = ("builtins", "math", "itertools", "functools", "operator")
MISSING = object()  # what a lookup gives for a name with no value
_MISSING = MISSING


def _module_is_host(modname):
    parts = (modname or "").split(".")
    if parts[0] in ("tilelang_ptx", "tilelang"):
        return len(parts) > 1 and parts[1] in _HOST_PARTS
    return parts[0] not in _COMPILER_ROOTS and parts[0] != ""


def _is_macro(func):
    try:
        src = textwrap.dedent(inspect.getsource(func))
        fdef = ast.parse(src).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return True  # unreadable: leave it to libtilelang, which reports it
    for d in getattr(fdef, "decorator_list", []):
        t = d.func if isinstance(d, ast.Call) else d
        if (isinstance(t, ast.Attribute) and t.attr == "macro") or (isinstance(t, ast.Name) and t.id == "macro"):
            return True
    return False


def _reads_host(func, lookup, seen):
    """Whether helper func (a function of the kernel's file) reads host state: a host module or function,
    directly or through the helpers it calls."""
    if func.__code__ in seen:
        return False
    seen.add(func.__code__)
    try:
        names = _helpers.Helper(func, TypeError).names
    except (TypeError, SyntaxError, StopIteration):
        return False
    for n in names:
        v = lookup(func, n)
        if v is _MISSING:
            continue
        if inspect.ismodule(v):
            if _module_is_host(v.__name__):
                return True
        elif _helpers.is_helper(v) and getattr(v, "__module__", None) == getattr(func, "__module__", None):
            if _reads_host(v, lookup, seen):
                return True
        elif callable(v) and not inspect.isclass(v) and _module_is_host(getattr(v, "__module__", None)):
            return True
    return False


def _is_host_function(v, owner, lookup):
    if inspect.isclass(v) or not callable(v):
        return False
    if _helpers.is_helper(v) and getattr(v, "__module__", None) == getattr(owner, "__module__", None):
        return not _is_macro(v) and _reads_host(v, lookup, set())
    return _module_is_host(getattr(v, "__module__", None))


def _path(node):
    """(root name, [attributes]) of a Name / Attribute chain, else None."""
    attrs = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return node.id, attrs[::-1]
    return None


def _constant(node, outer):
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.Name, ast.Attribute)):
        p = _path(node)
        return p is not None and p[0] in outer
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_constant(e, outer) for e in node.elts)
    if isinstance(node, ast.UnaryOp):
        return _constant(node.operand, outer)
    if isinstance(node, ast.BinOp):
        return _constant(node.left, outer) and _constant(node.right, outer)
    return False


def _resolve(path, func, lookup):
    v = lookup(func, path[0])
    try:
        for a in path[1]:
            if v is _MISSING:
                break
            v = getattr(v, a)
    except Exception:  # noqa: BLE001 - not resolvable here: libtilelang reports it
        return _MISSING
    return v


def fold(func, lines, indent, outer, lookup, literal, capture_error):
    """Folds the host calls of function `func` whose source is `lines` (a list, changed in place; the
    function's first line indented by `indent`).  outer: the names it reads from outside; lookup(func,
    name): their values (_MISSING when undefined); literal(value, where): the capture text of a value.
    Returns the set of outer names that the source no longer reads."""
    tree = ast.parse(textwrap.dedent("".join(lines)))
    folds, kept = [], set()

    def visit(node):
        if isinstance(node, ast.Call) and not any(isinstance(a, ast.Starred) for a in node.args) and \
                all(k.arg is not None for k in node.keywords):
            p = _path(node.func)
            if p is not None and p[0] in outer and \
                    all(_constant(a, outer) for a in node.args + [k.value for k in node.keywords]):
                v = _resolve(p, func, lookup)
                if v is not _MISSING and _is_host_function(v, func, lookup):
                    text = _evaluate(node, func, lookup, literal, capture_error)
                    if text is not None:
                        folds.append((node, text))
                        return
        if isinstance(node, ast.Name):
            kept.add(node.id)
        for c in ast.iter_child_nodes(node):
            visit(c)

    visit(tree)
    for node, text in sorted(folds, key=lambda f: (f[0].lineno, f[0].col_offset), reverse=True):
        replace_span(lines, indent, node, text)
    gone = set()
    for node, _ in folds:
        gone |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    return gone - kept


def _evaluate(node, func, lookup, literal, capture_error):
    src = ast.unparse(node)
    ns = {}
    for n in {x.id for x in ast.walk(node) if isinstance(x, ast.Name)}:
        v = lookup(func, n)
        if v is not _MISSING:
            ns[n] = v
    try:
        value = eval(compile(ast.Expression(body=ast.parse(src, mode="eval").body), "<capture>", "eval"),  # noqa: S307
                     {"__builtins__": __builtins__}, ns)
    except Exception as e:  # noqa: BLE001 - TileLang would raise it where the kernel is made
        raise capture_error(f"kernel '{func.__name__}' calls '{src}', which Python evaluates when the kernel is "
                            f"captured; it raised {type(e).__name__}: {e}") from None
    try:
        text = literal(value, f"'{src}'")
    except capture_error:
        return None  # not a value a kernel captures: libtilelang sees the call
    return text if text.replace(".", "").isalnum() or text[0] in "'\"([" else f"({text})"


def replace_span(lines, indent, node, text):
    """Replaces the text of AST `node` (positions in the dedented source of a function whose first line is
    indented by `indent`; columns count UTF-8 bytes, as ast's do) in `lines` with `text`, keeping the
    number of lines."""
    l0, l1 = node.lineno - 1, node.end_lineno - 1
    c0, c1 = node.col_offset + indent, node.end_col_offset + indent
    head, tail = lines[l0].encode()[:c0].decode(), lines[l1].encode()[c1:].decode()
    lines[l0] = head + text + tail
    for i in range(l0 + 1, l1 + 1):
        lines[i] = "\n"
