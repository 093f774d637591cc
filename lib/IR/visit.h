/* Read-only traversal of the tile/SIMT IR (internal): one place that knows
 * every child of every node, for the analyses that only need to see them
 * (which buffers a statement uses, which dynamic symbols a function needs,
 * which vector widths touch a tensor).  Passes that copy and rewrite the IR
 * use rewrite.h. */
#ifndef TL_VISIT_H
#define TL_VISIT_H

#include "IR/tir.h"

/* Nesting deeper than this stops the walk and sets too_deep. */
#define TL_VISIT_MAX_DEPTH 2000

/* Embed as the first member of an analysis' state and cast back in the
 * callbacks.  Any callback may be NULL. */
typedef struct tl_visitor tl_visitor;
struct tl_visitor {
  /* every expression node, before its operands */
  void (*expr)(tl_visitor *v, const tl_expr *e);
  /* every statement, before its children */
  void (*stmt)(tl_visitor *v, const tl_stmt *s);
  /* every region operand of a tile op, before its min/extent expressions */
  void (*region)(tl_visitor *v, const tl_region *r);
  bool too_deep; /* set when TL_VISIT_MAX_DEPTH was exceeded */
  int depth_;    /* internal */
};

/* Every buffer reference below a statement: bv->buffer(bv, b) for a load's
 * buffer, a buffer argument (TL_EXPR_BUFFER), a store's buffer and a tile-op
 * region's buffer, in pre-order, once per reference.  Embed as the first
 * member of an analysis' state and cast back in the callback; v is set by
 * tl_visit_buffers. */
typedef struct tl_buffer_visitor tl_buffer_visitor;
struct tl_buffer_visitor {
  tl_visitor v;
  void (*buffer)(tl_buffer_visitor *bv, const tl_buffer *b);
};
/* Visits s (NULL: nothing); false when the nesting was too deep to see
 * every reference (v.too_deep). */
bool tl_visit_buffers(tl_buffer_visitor *bv, const tl_stmt *s);

/* The state of a walk that gathers a set (of buffers, variables, ...) into
 * one map and needs nothing else.  The callbacks get &mv->v and add keys with
 * tl_map_visitor_add, which sets oom when the map cannot grow. */
typedef struct tl_map_visitor {
  tl_visitor v; /* first */
  tl_map *set;
  bool oom;
} tl_map_visitor;
/* Puts key into mv->set (value 1); NULL keys are left out. */
void tl_map_visitor_add(tl_map_visitor *mv, const void *key);
/* The operands of e that are one expression each, in order: binary a, b;
 * unary a; select cond, t, f; cast value; ramp base, stride; broadcast
 * value.  Stores pointers to those fields of e in slots and returns their
 * count (0 to 3); 0 for the other kinds (leaves, and loads and calls, whose
 * indices / arguments are arrays). */
int tl_expr_operand_slots(tl_expr *e, tl_expr **slots[3]);
/* The same operands' values. */
int tl_expr_operands(const tl_expr *e, const tl_expr *ops[3]);

/* Visits e and all its operands (loads' indices, calls' arguments, ...). */
void tl_visit_expr(tl_visitor *v, const tl_expr *e);
/* Visits s and everything below it: child statements and every expression
 * they hold (loop bounds and steps, kernel grid and threads, shapes and
 * initial values of allocated buffers, store indices and values, conditions,
 * let and eval values, tile-op operands and attributes). */
void tl_visit_stmt(tl_visitor *v, const tl_stmt *s);

/* Does some node of e (e or an operand, any depth, pre-order) satisfy
 * pred(node, user)?  A node deeper than max_depth levels below e
 * (max_depth < 0: TL_VISIT_MAX_DEPTH in all) makes the answer if_too_deep;
 * a NULL e answers false.  With an "is this node bad" pred,
 * !tl_expr_any(...) asks whether every node is good. */
bool tl_expr_any(const tl_expr *e, bool (*pred)(const tl_expr *e, void *user), void *user, int max_depth,
                 bool if_too_deep);

/* The lets bound to per-thread values (`tx = T.get_thread_binding()`) that
 * a walk has met: a let of the thread index is no use of it by itself, a
 * read of its variable is.  Up to TL_TID_LETS; more count as uses. */
#define TL_TID_LETS 32
typedef struct tl_tid_lets {
  const tl_var *vars[TL_TID_LETS];
  tl_loc at[TL_TID_LETS]; /* each let's value */
  int n;
} tl_tid_lets;
/* Does e read the thread index (T.get_thread_binding, T.get_lane_idx,
 * T.get_warp_idx), directly or through a let of lets (NULL: none)? */
bool tl_expr_reads_tid(const tl_expr *e, const tl_tid_lets *lets);
/* Where e reads it: the location of e for a direct read, else that of the
 * value of the first let of lets e reads (e's when none). */
tl_loc tl_expr_tid_at(const tl_expr *e, const tl_tid_lets *lets);
/* A let of var = value: when value reads the thread index, var joins lets;
 * true when it cannot (lets full: the let counts as a use). */
bool tl_tid_let(tl_tid_lets *lets, const tl_var *var, const tl_expr *value);
/* Does s use the thread index (T.get_thread_binding, T.get_lane_idx,
 * T.get_warp_idx) outside tile-op operands, any depth (a let of it is a use
 * once its variable is read: tl_tid_let)?  Such a kernel body
 * is a per-thread program (every thread runs each statement; T.Parallel is
 * refused in it): the one rule of the static checks (lib/Lower), the
 * atomic lowering, the reference evaluator and the work analysis.  *at
 * (may be NULL) gets the location of the first expression that uses it;
 * a nesting too deep to see answers true. */
bool tl_stmt_uses_thread_index(const tl_stmt *s, tl_loc *at);
/* Is s a role scope, `if T.ws(g): body` (docs/hopper.md "Explicit warp
 * specialisation")?  Its body is not walked by tl_stmt_uses_thread_index:
 * a scope that uses the thread index is per-thread code of its warpgroup
 * only (tl_ws_scope_uses_thread_index), and the other scopes stay tile
 * code. */
bool tl_stmt_is_ws_scope(const tl_stmt *s);
/* Does the body of role scope `scope`, found inside kernel body `body`,
 * use the thread index (lets of it made before the scope count, as in
 * tl_stmt_uses_thread_index)?  *at (may be NULL): where. */
bool tl_ws_scope_uses_thread_index(const tl_stmt *body, const tl_stmt *scope, tl_loc *at);

/* Whether a select (cond ? t : f, T.if_then_else) evaluates only the arm its
 * condition picks: TileLang's meaning, where the condition may guard a load
 * (T.if_then_else(i < N, A[i], 0)).  True for a scalar condition when an arm
 * loads or has side effects and neither arm holds a warp-collective call
 * (which must not diverge); false otherwise, where evaluating both arms is
 * the same.  The one rule of the code generator and the CPU executor. */
bool tl_select_one_arm(const tl_expr *cond, const tl_expr *t, const tl_expr *f);

#endif
