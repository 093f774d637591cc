/* Pass "pack-int4" of lib/Lower (tile IR; pipeline.c's order, after
 * warp-specialize): int4 / uint4 buffers become their packed storage.
 *
 * A T.int4 tensor of shape (..., K) is stored as int8 (..., K / 2), two
 * values per byte, the even-index one in the low nibble (tl_dtype_storage,
 * include/tilelang/ir.h; TileLang's storage).  The lowering moves bytes:
 * a T.copy of int4 tiles is a T.copy of their bytes, and a T.gemm of int4
 * tiles is mma.sync.m16n8k64 .s4 (.u4 for uint4), whose fragments in bytes
 * are m16n8k32 .s8's (lib/Support/mma.h), on the bytes.
 *
 * Requires: a verified tile-IR function (warp-specialize has run: it leaves
 * int4 GEMMs on mma.sync, wgmma has no 4-bit integer type on sm_90a).
 * Guarantees (on success): no buffer, expression or variable of a 4-bit
 * dtype remains; every int4 / uint4 buffer (a tensor parameter: a new
 * buffer of the function's own, as split-kernels' stages share theirs; a
 * shared tile: in place) is int8 / uint8 with its last dim halved; every T.copy /
 * T.async_copy region on one has its last-dim offset and extent halved;
 * every T.gemm of such tiles has packed_int4=True (lower_gemm.c selects
 * m16n8k64 by it).  Nothing else changes.
 * Refused, each a located error (int4 values exist only as packed tiles):
 * an element access of an int4 buffer, an expression, variable or scalar
 * parameter of a 4-bit dtype (arithmetic, casts), an int4 fragment, local
 * or global scratch buffer, a tile op other than T.copy between two int4
 * buffers of one dtype and T.gemm; a last dim that is not a constant even
 * number, a T.StridedTensor int4 parameter, a copy region whose last-dim
 * offset is not a provable multiple of 2 or whose extent is odd; a T.gemm
 * of int4 tiles other than A (M, K), B (N, K) (transpose_A=False,
 * transpose_B=True: the pairs run along K), C int32. */
#include "IR/visit.h"
#include "Lower/lower_internal.h"

typedef struct p4_state {
  tl_visitor v; /* first */
  tl_module *m;
  tl_diag *d;
  int errors;
  tl_map bufs;  /* the 4-bit buffers (parameters and allocations) */
  tl_map param; /* an int4 parameter's buffer -> this function's storage buffer */
  bool oom;
} p4_state;

static bool is4(const tl_buffer *b) { return b && tl_dtype_is_int4(b->dtype); }

/* e / 2 when e is provably even (a constant, a sum of such, a product with
 * an even factor), else NULL. */
static tl_expr *halve(tl_module *m, tl_expr *e) {
  int64_t c;
  if (!e) return NULL;
  if (tl_expr_is_const_int(e, &c)) return c % 2 ? NULL : tl_ir_int(m, e->loc, e->dtype, c / 2);
  if (e->kind != TL_EXPR_BINARY) return NULL;
  tl_binop op = e->u.bin.op;
  tl_expr *a = e->u.bin.a, *b = e->u.bin.b;
  if (op == TL_OP_ADD || op == TL_OP_SUB) {
    tl_expr *ha = halve(m, a), *hb = ha ? halve(m, b) : NULL;
    return hb ? tl_ir_binary(m, e->loc, op, ha, hb) : NULL;
  }
  if (op != TL_OP_MUL) return NULL;
  tl_expr *ha = halve(m, a);
  if (ha) return tl_ir_binary(m, e->loc, op, ha, b);
  tl_expr *hb = halve(m, b);
  return hb ? tl_ir_binary(m, e->loc, op, a, hb) : NULL;
}

#define err(st, loc, ...) (tl_diag_report((st)->d, TL_DIAG_ERROR, (loc), __VA_ARGS__), (st)->errors++)

/* A 4-bit buffer's declaration: where it lives and its last dim. */
static void check_buffer(p4_state *st, const tl_buffer *b) {
  if (tl_map_get(&st->bufs, b, NULL)) return;
  if (!tl_map_put(&st->bufs, b, (void *)1)) st->oom = true;
  int64_t last = 1;
  if (b->scope != TL_SCOPE_GLOBAL && b->scope != TL_SCOPE_SHARED && b->scope != TL_SCOPE_SHARED_DYN)
    err(st, b->loc,
        "int4 buffer '%s' is a fragment or local buffer: not supported yet (int4 tiles live in global "
        "and shared memory, feeding T.copy and T.gemm; accumulate in int32)",
        b->name);
  else if (b->scope == TL_SCOPE_GLOBAL && b->strides)
    err(st, b->loc, "int4 tensor '%s' with strides is not supported yet", b->name);
  else if (b->ndim < 1 || !tl_expr_is_const_int(b->shape[b->ndim - 1], &last) || last % 2)
    err(st, b->loc,
        "int4 buffer '%s': its last dim must be a constant even number (two int4 values per byte of "
        "its int8 storage)",
        b->name);
}

/* The last-dim offset and extent of an int4 region halve. */
static void check_region(p4_state *st, const tl_operand *o, tl_loc at) {
  const tl_region *r = &o->region;
  tl_loc loc = o->loc.line ? o->loc : at;
  if (r->ndim < 1) return;
  int64_t c;
  tl_expr *ext = r->extent[r->ndim - 1];
  if (!tl_expr_is_const_int(ext, &c) || c % 2)
    err(st, loc, "T.copy of int4 buffer '%s': the last-dim extent must be a constant even number", r->buffer->name);
  else if (!halve(st->m, r->min[r->ndim - 1]))
    err(st, loc,
        "T.copy of int4 buffer '%s': the last-dim offset must be a multiple of 2 (a constant or a "
        "product with an even factor: two int4 values per byte)",
        r->buffer->name);
}

static void check_gemm(p4_state *st, const tl_stmt *s) {
  const tl_operand *A = &s->u.tile.args[0], *B = &s->u.tile.args[1], *C = &s->u.tile.args[2];
  int64_t ta = 0, tb = 0;
  if (s->u.tile.attrs && s->u.tile.attrs[0]) tl_expr_is_const_int(s->u.tile.attrs[0], &ta);
  if (s->u.tile.attrs && s->u.tile.attrs[1]) tl_expr_is_const_int(s->u.tile.attrs[1], &tb);
  if (!is4(A->region.buffer) || !is4(B->region.buffer) || is4(C->region.buffer))
    err(st, s->loc, "T.gemm: int4 operands must be A and B, both int4 or both uint4 (C '%s' int32)",
        C->region.buffer->name);
  else if (ta || !tb)
    err(st, s->loc,
        "T.gemm with int4 operands needs A as (M, K) and B as (N, K): transpose_A=False, transpose_B=True "
        "(the int4 pairs of a byte run along K; mma.sync.m16n8k64 reads them so), in T.gemm of '%s'",
        A->region.buffer->name);
}

static void check_tile(p4_state *st, const tl_stmt *s) {
  int op = s->u.tile.op, n4 = 0, nr = 0;
  const tl_buffer *b4 = NULL;
  for (int i = 0; i < s->u.tile.nargs; i++)
    if (s->u.tile.args[i].kind == TL_OPND_REGION) {
      nr++;
      if (is4(s->u.tile.args[i].region.buffer)) n4++, b4 = s->u.tile.args[i].region.buffer;
    }
  if (!n4) return;
  if (op == TL_TILE_GEMM) return check_gemm(st, s);
  if (op != TL_TILE_COPY && op != TL_TILE_ASYNC_COPY) {
    err(st, s->loc,
        "T.%s of int4 buffer '%s' is not supported yet (int4 tiles are moved with T.copy and "
        "multiplied with T.gemm)",
        tl_tile_ops[op].name, b4->name);
    return;
  }
  const tl_buffer *src = s->u.tile.args[0].region.buffer, *dst = s->u.tile.args[1].region.buffer;
  if (n4 != 2 || nr != 2 || !tl_dtype_eq(src->dtype, dst->dtype)) {
    err(st, s->loc,
        "T.copy from %s '%s' to %s '%s': a copy with int4 must have int4 (or uint4) on both "
        "sides (converting to or from int4 is not supported yet)",
        tl_dtype_name(src->dtype), src->name, tl_dtype_name(dst->dtype), dst->name);
    return;
  }
  for (int i = 0; i < 2; i++) check_region(st, &s->u.tile.args[i], s->loc);
}

static void on_stmt(tl_visitor *v, const tl_stmt *s) {
  p4_state *st = (p4_state *)v;
  if (s->kind == TL_STMT_ALLOC && is4(s->u.alloc.buffer)) check_buffer(st, s->u.alloc.buffer);
  else if (s->kind == TL_STMT_STORE && is4(s->u.store.buffer))
    err(st, s->loc,
        "a store to an element of int4 buffer '%s' is not supported yet (int4 tiles are moved with T.copy "
        "and multiplied with T.gemm)",
        s->u.store.buffer->name);
  else if (s->kind == TL_STMT_TILE) check_tile(st, s);
}

static void on_expr(tl_visitor *v, const tl_expr *e) {
  p4_state *st = (p4_state *)v;
  if (e->kind == TL_EXPR_LOAD && is4(e->u.load.buffer))
    err(st, e->loc,
        "a read of an element of int4 buffer '%s' is not supported yet (int4 tiles are moved with T.copy "
        "and multiplied with T.gemm)",
        e->u.load.buffer->name);
  else if (e->kind == TL_EXPR_BUFFER && is4(e->u.buffer))
    err(st, e->loc, "int4 buffer '%s' cannot be an intrinsic's argument (not supported yet)", e->u.buffer->name);
  else if (e->kind != TL_EXPR_LOAD && tl_dtype_is_int4(e->dtype))
    err(st, e->loc, "an int4 value in an expression is not supported yet (%s: no arithmetic or casts on int4)",
        tl_dtype_name(e->dtype));
}

/* Rewrites the tile ops below s (the checks have passed). */
static bool rewrite(p4_state *st, tl_stmt *s) {
  if (!s) return true;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (!rewrite(st, s->u.seq.stmts[i])) return false;
    return true;
  case TL_STMT_FOR: return rewrite(st, s->u.loop.body);
  case TL_STMT_WHILE: return rewrite(st, s->u.whiles.body);
  case TL_STMT_KERNEL: return rewrite(st, s->u.kernel.body);
  case TL_STMT_IF: return rewrite(st, s->u.ifs.then_s) && rewrite(st, s->u.ifs.else_s);
  case TL_STMT_TILE: break;
  default: return true;
  }
  bool any = false;
  for (int i = 0; i < s->u.tile.nargs; i++) {
    tl_operand *o = &s->u.tile.args[i];
    if (o->kind != TL_OPND_REGION || !is4(o->region.buffer) || o->region.ndim < 1) continue;
    int l = o->region.ndim - 1;
    tl_expr *mn = halve(st->m, o->region.min[l]), *ex = halve(st->m, o->region.extent[l]);
    if (!mn || !ex) return false;
    o->region.min[l] = mn, o->region.extent[l] = ex;
    tl_buffer *nb = tl_map_get(&st->param, o->region.buffer, NULL);
    if (nb) o->region.buffer = nb;
    any = true;
  }
  if (!any || s->u.tile.op != TL_TILE_GEMM) return true;
  int na = tl_tile_ops[TL_TILE_GEMM].nattrs, pk = tl_tile_op_attr_index(TL_TILE_GEMM, "packed_int4");
  if (!s->u.tile.attrs) {
    s->u.tile.attrs = tl_arena_alloc(&st->m->arena, (size_t)na * sizeof *s->u.tile.attrs);
    if (!s->u.tile.attrs) return false;
    for (int k = 0; k < na; k++) s->u.tile.attrs[k] = NULL;
  }
  return (s->u.tile.attrs[pk] = tl_ir_int(st->m, s->loc, TL_BOOL, 1)) != NULL;
}

/* Buffer b becomes its storage: dtype int8 / uint8, last dim halved. */
static bool to_storage(tl_module *m, tl_buffer *b) {
  int64_t last;
  tl_expr **sh = tl_arena_alloc(&m->arena, (size_t)b->ndim * sizeof *sh);
  if (!sh || !tl_expr_is_const_int(b->shape[b->ndim - 1], &last)) return false;
  for (int d = 0; d < b->ndim; d++) sh[d] = b->shape[d];
  if (!(sh[b->ndim - 1] = tl_ir_int(m, b->loc, b->shape[b->ndim - 1]->dtype, last / 2))) return false;
  b->shape = sh;
  b->dtype = tl_dtype_storage(b->dtype, NULL);
  return true;
}

/* A copy of parameter buffer b as its storage, f's own: the stage
 * functions of one prim_func (split-kernels) share their parameters'
 * buffers, and each stage's pass still sees them as int4. */
static tl_buffer *param_storage(p4_state *st, tl_buffer *b) {
  tl_buffer *nb = tl_arena_alloc(&st->m->arena, sizeof *nb);
  if (!nb) return NULL;
  *nb = *b;
  return to_storage(st->m, nb) && tl_map_put(&st->param, b, nb) ? nb : NULL;
}

static bool collect_alloc(tl_buffer **out, int *n, int cap, tl_stmt *s) {
  if (!s) return true;
  switch (s->kind) {
  case TL_STMT_SEQ:
    for (int i = 0; i < s->u.seq.n; i++)
      if (!collect_alloc(out, n, cap, s->u.seq.stmts[i])) return false;
    return true;
  case TL_STMT_FOR: return collect_alloc(out, n, cap, s->u.loop.body);
  case TL_STMT_WHILE: return collect_alloc(out, n, cap, s->u.whiles.body);
  case TL_STMT_KERNEL: return collect_alloc(out, n, cap, s->u.kernel.body);
  case TL_STMT_IF: return collect_alloc(out, n, cap, s->u.ifs.then_s) && collect_alloc(out, n, cap, s->u.ifs.else_s);
  case TL_STMT_ALLOC:
    if (!is4(s->u.alloc.buffer)) return true;
    if (*n >= cap) return false;
    out[(*n)++] = s->u.alloc.buffer;
    return true;
  default: return true;
  }
}

bool tl_lower_pack_int4(tl_module *m, tl_primfunc *f, const tl_target *target, tl_diag *d) {
  (void)target;
  p4_state st = {.v = {.expr = on_expr, .stmt = on_stmt}, .m = m, .d = d};
  tl_map_init(&st.bufs);
  tl_map_init(&st.param);
  for (int i = 0; i < f->nparams; i++) {
    const tl_param *p = &f->params[i];
    if (p->kind == TL_PARAM_TENSOR && is4(p->buffer)) check_buffer(&st, p->buffer);
    if (p->kind == TL_PARAM_SCALAR && p->var && tl_dtype_is_int4(p->var->dtype))
      err(&st, p->var->loc, "scalar parameter '%s' of an int4 dtype is not supported yet", p->var->name);
  }
  tl_visit_stmt(&st.v, f->body);
  bool any = st.bufs.len > 0, ok = !st.errors && !st.oom && !st.v.too_deep;
  tl_map_free(&st.bufs);
  if (!ok || !any) tl_map_free(&st.param);
  if (!ok) {
    if (!st.errors) tl_error(d, f->loc, "pack-int4: out of memory or a body nested too deeply");
    return false;
  }
  if (!any) return true;
  enum { CAP = 256 };
  tl_buffer *allocs[CAP];
  int na = 0;
  bool done = true;
  for (int i = 0; done && i < f->nparams; i++)
    if (f->params[i].kind == TL_PARAM_TENSOR && is4(f->params[i].buffer))
      done = (f->params[i].buffer = param_storage(&st, f->params[i].buffer)) != NULL;
  done = done && rewrite(&st, f->body) && collect_alloc(allocs, &na, CAP, f->body);
  for (int i = 0; done && i < na; i++) done = to_storage(m, allocs[i]);
  tl_map_free(&st.param);
  if (!done) tl_error(d, f->loc, "pack-int4: out of memory (or more than %d int4 allocations)", CAP);
  return done;
}
