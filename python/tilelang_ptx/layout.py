"""tilelang.layout -- layout constructors kernel files name (make_swizzled_layout, Layout, Fragment).  They
are used inside kernels (T.annotate_layout({...: tilelang.layout.make_swizzled_layout(buf)})), which the
compiler reads from the source; in Python they return inert values like the T namespace."""
from .language import Inert


def make_swizzled_layout(buffer, k_major=True, allow_pad=True):
    return Inert("make_swizzled_layout", (buffer,), {"k_major": k_major, "allow_pad": allow_pad})


def make_mma_swizzle_layout(buffer, is_smooth=False):
    """tilelang.cuda.intrinsics.make_mma_swizzle_layout: the same hint (a swizzle of a shared buffer)."""
    return Inert("make_mma_swizzle_layout", (buffer,), {"is_smooth": is_smooth})


Layout = Inert("Layout")
Fragment = Inert("Fragment")


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return Inert(name)
