import a.b as c, d
from .x import (y as z, w)
from . import *
a[1,]
a[1:2, ::3]
f(*a, b=1, **k)
-1
x: int = 3
(x): int
u'x'
b'a'
f'{x!r:>{w}} a {y=}'
1j
10**30
...
lambda x, /, y=1, *a, z, **k: x
del a, b[1]
print("a'", '\x7f\xa0\u00e9\n')
[i for i in range(3) if i for j in k]
{k: v for k, v in d.items()}
{1, 2}
(x for x in y)
a = yield
async def f():
    async for a in b: await x
    async with c: pass
class A(B, metaclass=M):
    x: int
try:
    pass
except E as e:
    raise X from e
else:
    pass
finally:
    pass
with (a as b, c): pass
a or b or c
(a or b) or c
if (n := 10) > 5: pass
global q
assert x, "m"
for *a, b in c: pass
else: pass
x = {}
