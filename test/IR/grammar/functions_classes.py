import os.path as osp, sys
from typing import (Any, Optional,)
from ..pkg.mod import name as alias
from ... import up


@decorator
@decorator.attr(1, key=[2])
@(lambda f: f)
class Base(object, *mixins, metaclass=Meta, **opts):
    """docstring"""
    attr: int = 0
    other: "Optional[int]"

    @property
    def value(self) -> Optional[int]:
        return self.attr

    @staticmethod
    async def fetch(url: str, *, timeout: float = 1.0, **kw: Any) -> bytes:
        async with session(url) as resp, other():
            data = await resp.read()
        async for chunk in stream():
            yield chunk
        result = [x async for x in aiter() if await x]
        return data


def outer(a, b=2, /, c=3, *args, d, e=5, **kwargs):
    total = 0

    def inner():
        nonlocal total
        global counter
        total += 1
        return total

    def gen():
        yield
        yield 1, 2
        x = yield from inner()
        return

    try:
        raise
    except (KeyError, IndexError) as err:
        raise ValueError("bad") from err
    except Exception:
        pass
    else:
        pass
    finally:
        del total

    try:
        pass
    except* OSError as group:
        pass

    obj.attr: int = 1
    seq[0]: float
    first, *rest = args
    [p, q] = (1, 2)
    x = y = z = {**kwargs, "k": 1}
    s = {i * 2 for i in range(3)}
    g = (i for i in range(3) for j in range(i) if i if j)
    m = {k: v for k, v in zip("ab", (1, 2))}
    f = f"{x!a} {y:{width}.{prec}f} {'nested'} {{}} {x:>{10}}"
    t = a if b else c if d else e
    u = not a and b or c
    w = a[1:2, ..., None]
    n = -x ** -y
    v = print(*args, sep="", **kwargs)
    while (chunk := read()) is not None:
        if chunk in seen and chunk not in skip:
            continue
        break
    else:
        pass
    assert x, "message"
    return lambda *a, k=1, **kw: (a, k, kw)
