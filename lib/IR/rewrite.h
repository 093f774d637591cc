/* Substituting copier of the tile/SIMT IR (internal): one place that
 * rebuilds an expression or statement tree with variables replaced from a
 * map, for the passes that clone and rewrite IR (pipelining, fragment
 * pipelining, tile lowering, versioning, atomic pairing).  Hooks let a pass
 * replace any node on the way; everything else is copied by the defaults
 * below.  The read-only counterpart is visit.h. */
#ifndef TL_REWRITE_H
#define TL_REWRITE_H

#include "IR/tir.h"

/* Embed as the first member of a pass's state (or keep a pointer back to
 * it) and cast back in the hooks.  Any hook may be NULL.
 *
 * Default copy of an expression e (new nodes in m's arena, at e's location):
 *   VAR                  subst[e->u.var] when there is one, else e itself;
 *   INT, FLOAT, STRING, BUFFER   e itself (leaves are shared);
 *   BINARY, UNARY, SELECT, CAST  rebuilt with the operands rewritten through
 *                        the folding constructors (tl_ir_binary, ...);
 *   LOAD                 indices rewritten, then the access hook; a load of
 *                        e's dtype;
 *   CALL                 arguments rewritten, then the call hook, or
 *                        tl_ir_call cast back to e's dtype when that is a
 *                        scalar the call's own typing does not give;
 *   RAMP, BROADCAST      the node with its operands rewritten.
 * With share_unchanged set, a node whose rewritten operands are all its own
 * is returned itself instead of being rebuilt.
 * Default copy of a statement s (a new node, *s copied, then):
 *   SEQ, IF              children rewritten;
 *   FOR                  mins, extents, step, body rewritten (same variables);
 *   STORE                indices (then the access hook) and value rewritten;
 *   LET, EVAL            value rewritten;
 *   TILE                 operand regions, expressions and attributes rewritten;
 *   KERNEL               grid, thread count and body rewritten;
 *   ALLOC                s itself (buffers are not copied).
 * Nesting deeper than max_depth (expressions, and statements, each counted
 * from the call) stops the copy: too_deep is set, deep_loc is the node. */
typedef struct tl_rewriter tl_rewriter;
struct tl_rewriter {
  tl_module *m;
  const tl_map *subst;  /* tl_var * → tl_expr *; NULL: nothing substituted */
  int max_depth;        /* 0: no limit */
  bool share_unchanged; /* see above */
  /* Every expression, before the default: its replacement (not walked
   * further), or NULL for the default copy (set failed to stop instead). */
  tl_expr *(*expr)(tl_rewriter *rw, const tl_expr *e, int depth);
  /* Every statement, before the default, as expr. */
  tl_stmt *(*stmt)(tl_rewriter *rw, const tl_stmt *s, int depth);
  /* Every load and store, after its indices were rewritten: may change the
   * buffer (*b), the index count (*n) and the indices (ix, an arena array
   * of *n entries it may modify); returns the index array to use (NULL:
   * failed). */
  tl_expr **(*access)(tl_rewriter *rw, tl_loc loc, tl_buffer **b, int *n, tl_expr **ix);
  /* Every call, with its arguments rewritten (args, n entries, modifiable):
   * the call to use (NULL: failed). */
  tl_expr *(*call)(tl_rewriter *rw, const tl_expr *e, int n, tl_expr **args);
  bool failed;     /* a hook failed, or out of memory */
  bool too_deep;   /* max_depth was exceeded (failed is set too) */
  tl_loc deep_loc; /* where */
};

/* The copy of e (depth: e's nesting level, 1 at a statement); NULL when it
 * failed (rw->failed set), or for a NULL e. */
tl_expr *tl_rewrite_expr(tl_rewriter *rw, const tl_expr *e, int depth);
/* n expressions copied into a new arena array with room for `front`
 * entries before them (left NULL for the caller); NULL on failure. */
tl_expr **tl_rewrite_exprs(tl_rewriter *rw, int n, tl_expr *const *xs, int front, int depth);
/* The copy of s (depth: its statement nesting level); NULL on failure or
 * for a NULL s. */
tl_stmt *tl_rewrite_stmt(tl_rewriter *rw, const tl_stmt *s, int depth);

#endif
