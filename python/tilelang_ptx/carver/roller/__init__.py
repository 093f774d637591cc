"""tilelang.carver.roller -- the roller's names that kernel files import (rasterization plans)."""
