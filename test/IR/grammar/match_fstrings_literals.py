match x:
  case [1, *r] | {'k': v, a.b: 2, **kw} | P(1, a=b) | None | -1 | 1+2j | (a.b as z) | (1,) | () | (y) | _:
    pass
  case {}: pass
  case 1, *_ if y: pass
match = 3
match(x)
s = f"{x:{'>'}10}" f'''a
{y
 + 1}''' r'\d'
t = 0x_ff + 0o7 + 0b1 + 1_000 + 1e5 + .5 + 99999999999999999999999 + 0xffffffffffffffffffff
def g(a, b: int = 2, *args: int, c, d=4, **kw) -> None: ...
@dec(1)
@a.b
def h(): return *a, b
x[a:b, c]
x[()]
not a in b is not c
print(*[1], sep='')
nonlocal_ = 1
