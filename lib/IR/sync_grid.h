/* T.sync_grid(), TileLang's grid-wide barrier (internal; docs/language.md
 * "Grid barrier"): the rules the IR holds it to, and the facts the split
 * into launches (lib/Lower/split_kernels.c), the reference evaluator and
 * the verifier share.  The rules: a T.sync_grid() stands at the top level
 * of a T.Kernel body (a statement of the body itself), and nothing of one
 * side reaches the other except through global memory and the statements
 * tl_sync_grid_carried names (allocations, lets of indices and parameters,
 * kernel-wide hints), which the side after it gets again. */
#ifndef TL_SYNC_GRID_H
#define TL_SYNC_GRID_H

#include "IR/tir.h"

/* Is s the statement T.sync_grid()? */
bool tl_stmt_is_sync_grid(const tl_stmt *s);

/* The top-level statements of kernel's body (its SEQ's, or the body
 * itself): *list gets them, the count is returned (0 for none). */
int tl_kernel_top_stmts(const tl_stmt *kernel, tl_stmt *const **list);

/* Whether the body's top-level statements hold a T.sync_grid(). */
bool tl_kernel_has_sync_grid(const tl_stmt *kernel);

/* carried[i] for the top-level statements list[0..n) of a kernel body:
 * whether statement i, when a T.sync_grid() follows it, is one the side
 * after the barrier gets again (the same meaning there): an allocation
 * other than a T.alloc_global workspace (its contents do not cross; the
 * verifier makes sure nothing reads them before writing), a let whose value
 * reads no memory and no let that is not carried (block and thread
 * indices, parameters, constants), T.use_swizzle, T.annotate_layout,
 * T.no_set_max_nreg.  False on OOM. */
bool tl_sync_grid_carried(tl_stmt *const *list, int n, bool *carried);

/* The verifier's rule for f (verify.c): every T.sync_grid() at the top
 * level of a kernel body ("not supported: T.sync_grid inside a T.serial
 * loop" elsewhere), and after each one no read of a variable defined
 * before it that is not carried, nor of the contents of a buffer allocated
 * before it (not global) before a write after it; each finding one located
 * error.  Returns the number of errors. */
int tl_verify_sync_grid(const tl_primfunc *f, tl_diag *d);

#endif
