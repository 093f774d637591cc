"""tvm.testing -- requires_package, as TileLang's testing module re-exports it."""


def requires_package(*packages):
    from ..testing import requires_package as rp
    return rp(*packages)
