/* Pass "rasterize" of lib/Lower: T.use_swizzle(panel_size, order, enable) →
 * block-index remapping for L2 reuse (SIMT IR → SIMT IR; runs after
 * lower-tile-ops, which leaves the T.use_swizzle statement in place).
 *
 * Requires: lowered SIMT IR of a kernel with 2 or 3 grid dims (with one grid
 * dim, or enable=False, the statement is simply removed).
 * Guarantees: no T.use_swizzle remains.  With it, the kernel's block
 * variables bx, by become `bx = ...`, `by = ...` LET bindings at the top of
 * the kernel body computed from fresh block variables (the hardware
 * blockIdx.x/y), so every use of bx/by in the body sees the remapped
 * indices; blockIdx.z is unchanged.  The map is a bijection of the
 * gx x gy grid onto itself, so every range fact the lowering derived for
 * bx in [0, gx) and by in [0, gy) (guard elision) still holds.
 *
 * Algorithm: TileLang's rasterization2DRow / rasterization2DColumn
 * (src/tl_templates/cuda/threadblock_swizzle.h), here with P = panel_size,
 * b = bx0 + by0 * gx in launch order:
 *   row order:    panels of P rows of the grid (P * gx blocks each):
 *       panel = b / (P*gx), off = b % (P*gx),
 *       stride = P if panel + 1 < ceil(gy / P) else gy - panel*P,
 *       bx = off / stride (reversed, gx - 1 - off / stride, in odd panels),
 *       by = off % stride + panel * P
 *   column order: the same with the roles of x and y exchanged
 *       (panels of P columns, gy * P blocks each).
 * Consecutive blocks walk down a panel of P rows (columns) in a zig-zag, so
 * blocks running together share operand tiles in L2.  All values are
 * non-negative, so floordiv/floormod equal C's unsigned / and %. */
#include <string.h>

#include "Lower/lower_internal.h"

typedef struct rz_state {
  tl_module *m;
  tl_diag *d;
  const tl_stmt *found; /* the first T.use_swizzle */
  int errors;
  bool oom;
} rz_state;

/* Removes every T.use_swizzle from s (in place), remembering the first. */
static tl_stmt *strip(rz_state *st, tl_stmt *s, int depth) {
  if (!s) return s;
  if (!tl_lo_nesting_ok(st->d, s, depth, &st->errors, !st->errors)) return s;
  switch (s->kind) {
  case TL_STMT_SEQ: {
    int j = 0;
    for (int i = 0; i < s->u.seq.n; i++) {
      tl_stmt *x = strip(st, s->u.seq.stmts[i], depth + 1);
      if (x) s->u.seq.stmts[j++] = x;
    }
    s->u.seq.n = j;
    return s;
  }
  case TL_STMT_FOR: {
    tl_stmt *b = strip(st, s->u.loop.body, depth + 1);
    s->u.loop.body = b ? b : tl_ir_seq(st->m, s->loc, 0, NULL);
    if (!s->u.loop.body) st->oom = true;
    return s;
  }
  case TL_STMT_WHILE: {
    tl_stmt *b = strip(st, s->u.whiles.body, depth + 1);
    s->u.whiles.body = b ? b : tl_ir_seq(st->m, s->loc, 0, NULL);
    if (!s->u.whiles.body) st->oom = true;
    return s;
  }
  case TL_STMT_KERNEL: {
    tl_stmt *b = strip(st, s->u.kernel.body, depth + 1);
    s->u.kernel.body = b ? b : tl_ir_seq(st->m, s->loc, 0, NULL);
    if (!s->u.kernel.body) st->oom = true;
    return s;
  }
  case TL_STMT_IF: {
    tl_stmt *t = strip(st, s->u.ifs.then_s, depth + 1);
    s->u.ifs.then_s = t ? t : tl_ir_seq(st->m, s->loc, 0, NULL);
    if (!s->u.ifs.then_s) st->oom = true;
    if (s->u.ifs.else_s) s->u.ifs.else_s = strip(st, s->u.ifs.else_s, depth + 1);
    return s;
  }
  case TL_STMT_TILE:
    if (s->u.tile.op != TL_TILE_USE_SWIZZLE) return s;
    if (!st->found) st->found = s;
    return NULL;
  default: return s;
  }
}

static tl_expr *as_i32(rz_state *st, tl_loc loc, tl_expr *e) {
  if (!e) return NULL;
  return tl_dtype_eq(e->dtype, TL_INT32) ? e : tl_ir_cast(st->m, loc, TL_INT32, e);
}

bool tl_raster_params(const tl_stmt *u, int64_t *P, bool *enable, bool *column, tl_diag *d) {
  tl_loc loc = u->loc;
  int64_t en = 1;
  *P = 0;
  const tl_expr *pe = u->u.tile.nargs > 0 ? u->u.tile.args[0].expr : NULL;
  if (!pe || !tl_expr_is_const_int(pe, P) || *P < 1) {
    tl_error(d, loc, "T.use_swizzle: panel_size must be a positive constant");
    return false;
  }
  const tl_expr *ee = u->u.tile.attrs ? u->u.tile.attrs[1] : NULL;
  if (ee && !tl_expr_is_const_int(ee, &en)) {
    tl_error(d, loc, "T.use_swizzle: enable must be a constant");
    return false;
  }
  const tl_expr *oe = u->u.tile.attrs ? u->u.tile.attrs[0] : NULL;
  *enable = en != 0;
  *column = oe && oe->kind == TL_EXPR_STRING && oe->u.str && strcmp(oe->u.str, "column") == 0;
  return true;
}

bool tl_raster_lets(tl_module *m, tl_names *names, tl_loc loc, tl_expr *b, tl_expr *gx, tl_expr *gy, int64_t P,
                    bool column, tl_var *out_x, tl_var *out_y, tl_stmt **lets) {
  tl_var *vb = tl_names_fresh_var(names, loc, "rz_block", TL_INT32, TL_VAR_LET);
  tl_var *vp = tl_names_fresh_var(names, loc, "rz_panel", TL_INT32, TL_VAR_LET);
  tl_var *vo = tl_names_fresh_var(names, loc, "rz_offset", TL_INT32, TL_VAR_LET);
  tl_var *vs = tl_names_fresh_var(names, loc, "rz_stride", TL_INT32, TL_VAR_LET);
  if (!b || !gx || !gy || !vb || !vp || !vo || !vs) return false;
  /* the panel runs along y (row order) or x (column order) */
  tl_expr *along = column ? gx : gy, *across = column ? gy : gx;
  tl_expr *Pe = tl_lo_int(m, loc, P);
  tl_expr *psize = tl_ir_binary(m, loc, TL_OP_MUL, Pe, across);
  tl_expr *panel = tl_ir_binary(m, loc, TL_OP_FLOORDIV, tl_ir_var(m, loc, vb), psize);
  tl_expr *off = tl_ir_binary(m, loc, TL_OP_FLOORMOD, tl_ir_var(m, loc, vb), psize);
  tl_expr *npanels =
      tl_ir_binary(m, loc, TL_OP_FLOORDIV, tl_ir_binary(m, loc, TL_OP_ADD, along, tl_lo_int(m, loc, P - 1)), Pe);
  tl_expr *vpe = tl_ir_var(m, loc, vp);
  tl_expr *last_full =
      tl_ir_binary(m, loc, TL_OP_LT, tl_ir_binary(m, loc, TL_OP_ADD, vpe, tl_lo_int(m, loc, 1)), npanels);
  tl_expr *rest = tl_ir_binary(m, loc, TL_OP_SUB, along, tl_ir_binary(m, loc, TL_OP_MUL, vpe, Pe));
  tl_expr *stride = tl_ir_select(m, loc, last_full, Pe, rest);
  tl_expr *voe = tl_ir_var(m, loc, vo), *vse = tl_ir_var(m, loc, vs);
  tl_expr *q = tl_ir_binary(m, loc, TL_OP_FLOORDIV, voe, vse);
  tl_expr *odd = tl_ir_binary(m, loc, TL_OP_EQ, tl_ir_binary(m, loc, TL_OP_FLOORMOD, vpe, tl_lo_int(m, loc, 2)),
                              tl_lo_int(m, loc, 1));
  tl_expr *zig = tl_ir_select(
      m, loc, odd, tl_ir_binary(m, loc, TL_OP_SUB, tl_ir_binary(m, loc, TL_OP_SUB, across, tl_lo_int(m, loc, 1)), q),
      q);
  tl_expr *pos = tl_ir_binary(m, loc, TL_OP_ADD, tl_ir_binary(m, loc, TL_OP_FLOORMOD, voe, vse),
                              tl_ir_binary(m, loc, TL_OP_MUL, vpe, Pe));
  tl_expr *new_x = column ? pos : zig, *new_y = column ? zig : pos;
  tl_expr *vals[6] = {b, panel, off, stride, new_x, new_y};
  tl_var *vars[6] = {vb, vp, vo, vs, out_x, out_y};
  for (int i = 0; i < 6; i++) {
    tl_expr *v = vals[i] && !tl_dtype_eq(vals[i]->dtype, TL_INT32) ? tl_ir_cast(m, loc, TL_INT32, vals[i]) : vals[i];
    if (!v || !(lets[i] = tl_lo_let(m, loc, vars[i], v))) return false;
  }
  return true;
}

/* The remapping for one kernel. */
static bool remap(rz_state *st, tl_stmt *k, tl_names *names) {
  tl_module *m = st->m;
  const tl_stmt *u = st->found;
  tl_loc loc = u->loc;
  int64_t P = 0;
  bool enable = true, column = false;
  if (!tl_raster_params(u, &P, &enable, &column, st->d)) {
    st->errors++;
    return false;
  }
  if (!enable || k->u.kernel.ngrid < 2 || !k->u.kernel.block_vars[0] || !k->u.kernel.block_vars[1]) return true;

  tl_var *old_x = k->u.kernel.block_vars[0], *old_y = k->u.kernel.block_vars[1];
  tl_expr *gx = as_i32(st, loc, k->u.kernel.grid[0]), *gy = as_i32(st, loc, k->u.kernel.grid[1]);
  tl_var *bx0 = tl_names_fresh_var(names, old_x->loc, "bx_launch", TL_INT32, TL_VAR_BLOCK);
  tl_var *by0 = tl_names_fresh_var(names, old_y->loc, "by_launch", TL_INT32, TL_VAR_BLOCK);
  if (!gx || !gy || !bx0 || !by0) {
    st->oom = true;
    return false;
  }
  tl_expr *b = tl_ir_binary(m, loc, TL_OP_ADD, tl_ir_var(m, loc, bx0),
                            tl_ir_binary(m, loc, TL_OP_MUL, tl_ir_var(m, loc, by0), gx));
  old_x->kind = TL_VAR_LET;
  old_y->kind = TL_VAR_LET;
  tl_stmt *lets[7];
  if (!tl_raster_lets(m, names, loc, b, gx, gy, P, column, old_x, old_y, lets)) {
    st->oom = true;
    return false;
  }
  lets[6] = k->u.kernel.body;
  tl_stmt *body = tl_ir_seq(m, k->loc, 7, lets);
  if (!body) {
    st->oom = true;
    return false;
  }
  k->u.kernel.block_vars[0] = bx0;
  k->u.kernel.block_vars[1] = by0;
  k->u.kernel.body = body;
  return true;
}

bool tl_lower_rasterize(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d) {
  (void)target; /* nothing here depends on the target yet */
  rz_state st = {.m = m, .d = d};
  tl_stmt *k = tl_ir_find_kernel(f->body);
  if (!k) return true;
  strip(&st, k, 0);
  if (st.oom || st.errors) {
    if (st.oom) tl_error(d, f->loc, "out of memory while rasterizing");
    return false;
  }
  if (!st.found) return true;
  tl_names names;
  bool ok = tl_names_collect(&names, m, f);
  if (ok) ok = remap(&st, k, &names);
  tl_names_free(&names);
  if (st.oom) {
    tl_error(d, f->loc, "out of memory while rasterizing");
    return false;
  }
  return ok && st.errors == 0;
}
