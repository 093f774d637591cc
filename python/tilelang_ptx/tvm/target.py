"""tvm.target -- Target: a compile target in TVM's spellings ("cuda", "cuda -arch=sm_90a", a dict
{"kind": "cuda", "arch": "sm_90a"}, a tag "nvidia/nvidia-h100"); tilelang.jit(target=Target(...)) compiles
for it (jit._target reads .kind and .arch)."""


class Target:
    def __init__(self, target, host=None):
        from ..jit import resolve_target
        if isinstance(target, Target):
            target = target.spec
        self.spec = target
        self.host = host
        self.kind_name, self.arch = resolve_target(target)

    @property
    def kind(self):
        return _Kind(self.kind_name)

    @property
    def attrs(self):
        return {"arch": self.arch} if self.arch else {}

    def __str__(self):
        if self.kind_name == "cuda" and self.arch:
            return f"cuda -arch={self.arch}"
        return self.kind_name

    def __repr__(self):
        return f"Target({str(self)!r})"


class _Kind:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name

    def __eq__(self, other):
        return str(other) == self.name

    def __hash__(self):
        return hash(self.name)
