/* libtilelang: the whole public C API.
 *   core.h     status codes, contexts, last error
 *   ir.h       dtypes, parsing TileLang kernel files, printing, the builder
 *   runtime.h  compiling to PTX, loading with the CUDA driver, calling with
 *              DLPack tensors */
#ifndef TILELANG_TILELANG_H
#define TILELANG_TILELANG_H

#include "tilelang/core.h"
#include "tilelang/ir.h"
#include "tilelang/runtime.h"

#endif
