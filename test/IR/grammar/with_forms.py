with (a, b): pass
with (a): pass
with (a, b) as c: pass
with (a).b as c: pass
with (a, b).c: pass
with (yield): pass
with (a as b, c as d,): pass
with (cache_path / cache.params_path).open("wb") as f:
    pass
with a, b as (c, d): pass
with open(x) as f, open(y) as g:
    pass
s = "\x00a\0"
