/* Launch-expression programs (lib/Runtime).
 *
 * Role: grid sizes, thread counts and tensor dims of a kernel are integer
 * expressions of its dynamic symbols and integer scalar parameters
 * (T.ceildiv(n, 128), M * 2, ...).  At compile time tl_rx_translate turns
 * the tl_expr tree into a postfix program (recursion bounded by
 * TL_RX_MAX_DEPTH); at call time tl_rx_eval runs it on an explicit stack with
 * every operation overflow-checked (__builtin_*_overflow) and TIR division
 * semantics (floordiv/floormod round toward -inf, DIV truncates). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "Runtime/kernel.h"

typedef struct rx_builder {
  TL_VEC(tl_rx_op) ops;
  tl_var *const *syms;
  int nsyms;
  tl_var *const *scalars;
  const int *scalar_param;
  int nscalars;
  char *err;
  bool oom;
} rx_builder;

static bool emit(rx_builder *b, tl_rx_kind kind, int op, int32_t index, int64_t value) {
  tl_rx_op o = {(uint8_t)kind, (uint8_t)op, index, value};
  if (!tl_vec_push(&b->ops, o)) {
    b->oom = true;
    return false;
  }
  return true;
}

static bool fail(rx_builder *b, const char *fmt, const char *what) {
  if (!b->err) {
    size_t n = strlen(fmt) + (what ? strlen(what) : 0) + 1;
    b->err = malloc(n);
    if (b->err) snprintf(b->err, n, fmt, what ? what : "");
  }
  return false;
}

static bool tr(rx_builder *b, const tl_expr *e, int depth) {
  if (!e) return fail(b, "missing expression%s", NULL);
  if (depth > TL_RX_MAX_DEPTH) return fail(b, "expression nested more than 200 levels deep%s", NULL);
  switch (e->kind) {
  case TL_EXPR_INT: return emit(b, TL_RX_CONST, 0, 0, e->u.ival);
  case TL_EXPR_VAR: {
    for (int i = 0; i < b->nsyms; i++)
      if (b->syms[i] == e->u.var) return emit(b, TL_RX_SYM, 0, i, 0);
    for (int i = 0; i < b->nscalars; i++)
      if (b->scalars[i] == e->u.var) {
        if (!tl_dtype_is_int(e->u.var->dtype) && e->u.var->dtype.code != TL_TYPE_BOOL)
          return fail(b, "launch expression uses the float parameter '%s'", e->u.var->name);
        return emit(b, TL_RX_SCALAR, 0, b->scalar_param[i], 0);
      }
    return fail(b,
                "launch expression uses '%s', which is neither a dynamic dim nor a "
                "scalar parameter",
                e->u.var->name);
  }
  case TL_EXPR_CAST:
    if (!tl_dtype_is_int(e->dtype)) return fail(b, "launch expression casts to a non-integer type%s", NULL);
    return tr(b, e->u.cast.value, depth + 1);
  case TL_EXPR_UNARY:
    if (e->u.un.op != TL_OP_NEG) return fail(b, "unsupported unary operator in a launch expression%s", NULL);
    return tr(b, e->u.un.a, depth + 1) && emit(b, TL_RX_NEG, 0, 0, 0);
  case TL_EXPR_BINARY: {
    int op;
    switch (e->u.bin.op) {
    case TL_OP_ADD: op = TL_RXB_ADD; break;
    case TL_OP_SUB: op = TL_RXB_SUB; break;
    case TL_OP_MUL: op = TL_RXB_MUL; break;
    case TL_OP_DIV: op = TL_RXB_DIV; break;
    case TL_OP_FLOORDIV: op = TL_RXB_FLOORDIV; break;
    case TL_OP_FLOORMOD: op = TL_RXB_FLOORMOD; break;
    case TL_OP_MIN: op = TL_RXB_MIN; break;
    case TL_OP_MAX: op = TL_RXB_MAX; break;
    default: return fail(b, "unsupported operator in a launch expression%s", NULL);
    }
    return tr(b, e->u.bin.a, depth + 1) && tr(b, e->u.bin.b, depth + 1) && emit(b, TL_RX_BIN, op, 0, 0);
  }
  case TL_EXPR_CALL: {
    int op = e->u.call.op == TL_INTRIN_CEILDIV ? TL_RXB_CEILDIV
             : e->u.call.op == TL_INTRIN_MIN   ? TL_RXB_MIN
             : e->u.call.op == TL_INTRIN_MAX   ? TL_RXB_MAX
                                               : -1;
    if (op < 0 || e->u.call.n != 2)
      return fail(b, "T.%s is not supported in a launch expression", tl_intrinsic_name(e->u.call.op));
    return tr(b, e->u.call.args[0], depth + 1) && tr(b, e->u.call.args[1], depth + 1) && emit(b, TL_RX_BIN, op, 0, 0);
  }
  default:
    return fail(b,
                "unsupported launch expression (only integer arithmetic of dynamic "
                "dims and scalar parameters)%s",
                NULL);
  }
}

bool tl_rx_translate(const tl_expr *e, tl_var *const *syms, int nsyms, tl_var *const *scalars, const int *scalar_param,
                     int nscalars, tl_rx_prog *out, char **err) {
  rx_builder b = {0};
  b.syms = syms;
  b.nsyms = nsyms;
  b.scalars = scalars;
  b.scalar_param = scalar_param;
  b.nscalars = nscalars;
  out->ops = NULL;
  out->n = 0;
  *err = NULL;
  if (!tr(&b, e, 0) || b.oom) {
    tl_vec_free(&b.ops);
    *err = b.err ? b.err : (b.oom ? NULL : strdup("unsupported launch expression"));
    return false;
  }
  out->ops = b.ops.data;
  out->n = (int)b.ops.len;
  return true;
}

bool tl_rx_const(int64_t v, tl_rx_prog *out) {
  out->ops = malloc(sizeof *out->ops);
  out->n = out->ops ? 1 : 0;
  if (!out->ops) return false;
  out->ops[0] = (tl_rx_op){TL_RX_CONST, 0, 0, v};
  return true;
}

void tl_rx_free(tl_rx_prog *p) {
  free(p->ops);
  p->ops = NULL;
  p->n = 0;
}

static bool floordiv64(int64_t a, int64_t b, int64_t *q, int64_t *r) {
  if (b == 0 || (a == INT64_MIN && b == -1)) return false;
  int64_t qq = a / b, rr = a % b;
  if (rr != 0 && ((rr < 0) != (b < 0))) {
    qq -= 1;
    rr += b;
  }
  *q = qq;
  *r = rr;
  return true;
}

bool tl_rx_eval(const tl_rx_prog *p, const int64_t *symv, const int64_t *scalarv, int64_t *out, const char **why) {
  if (tl_rx_is_const(p, out)) { /* most grids, block sizes and dims: no interpreter per call */
    *why = NULL;
    return true;
  }
  /* Stack depth never exceeds the program length. */
  int64_t small[64];
  int64_t *st = p->n <= 64 ? small : malloc(sizeof(int64_t) * (size_t)p->n);
  if (!st) {
    *why = "out of memory";
    return false;
  }
  int sp = 0;
  bool ok = true;
  *why = NULL;
  for (int i = 0; i < p->n && ok; i++) {
    const tl_rx_op *o = &p->ops[i];
    switch (o->kind) {
    case TL_RX_CONST: st[sp++] = o->value; break;
    case TL_RX_SYM: st[sp++] = symv[o->index]; break;
    case TL_RX_SCALAR: st[sp++] = scalarv[o->index]; break;
    case TL_RX_NEG:
      if (sp < 1 || st[sp - 1] == INT64_MIN) {
        ok = false;
        *why = "overflow";
        break;
      }
      st[sp - 1] = -st[sp - 1];
      break;
    case TL_RX_BIN: {
      if (sp < 2) {
        ok = false;
        *why = "malformed expression";
        break;
      }
      int64_t a = st[sp - 2], c = st[sp - 1], r = 0, q = 0, m = 0;
      sp -= 2;
      switch (o->op) {
      case TL_RXB_ADD: ok = !__builtin_add_overflow(a, c, &r); break;
      case TL_RXB_SUB: ok = !__builtin_sub_overflow(a, c, &r); break;
      case TL_RXB_MUL: ok = !__builtin_mul_overflow(a, c, &r); break;
      case TL_RXB_DIV:
        if (c == 0) {
          ok = false;
          *why = "division by zero";
          break;
        }
        if (a == INT64_MIN && c == -1) {
          ok = false;
          break;
        }
        r = a / c;
        break;
      case TL_RXB_FLOORDIV:
      case TL_RXB_FLOORMOD:
        if (c == 0) {
          ok = false;
          *why = "division by zero";
          break;
        }
        ok = floordiv64(a, c, &q, &m);
        r = o->op == TL_RXB_FLOORDIV ? q : m;
        break;
      case TL_RXB_CEILDIV: /* ceil(a / c) = -floor(-a / c) */
        if (c == 0) {
          ok = false;
          *why = "division by zero";
          break;
        }
        if (a == INT64_MIN) {
          ok = false;
          break;
        }
        ok = floordiv64(-a, c, &q, &m) && q != INT64_MIN;
        r = -q;
        break;
      case TL_RXB_MIN: r = a < c ? a : c; break;
      case TL_RXB_MAX: r = a > c ? a : c; break;
      default:
        ok = false;
        *why = "malformed expression";
        break;
      }
      if (!ok && !*why) *why = "overflow";
      st[sp++] = r;
      break;
    }
    default:
      ok = false;
      *why = "malformed expression";
      break;
    }
  }
  if (ok && sp != 1) {
    ok = false;
    *why = "malformed expression";
  }
  if (ok) *out = st[0];
  if (st != small) free(st);
  return ok;
}

void tl_rx_print(tl_strbuf *s, const tl_rx_prog *p, const tl_rt_sig *sig) {
  /* Rebuild infix strings on a stack of heap strings. */
  char **st = calloc((size_t)(p->n ? p->n : 1), sizeof *st);
  if (!st) {
    tl_strbuf_append(s, "<expr>");
    return;
  }
  int sp = 0;
  bool ok = true;
  static const char *const binops[] = {"+", "-", "*", "/", "//", "%", "min", "max", "ceildiv"};
  for (int i = 0; i < p->n && ok; i++) {
    const tl_rx_op *o = &p->ops[i];
    tl_strbuf t = {0};
    switch (o->kind) {
    case TL_RX_CONST: tl_strbuf_printf(&t, "%lld", (long long)o->value); break;
    case TL_RX_SYM: tl_strbuf_append(&t, o->index < sig->nsyms ? sig->sym_names[o->index] : "?"); break;
    case TL_RX_SCALAR: tl_strbuf_append(&t, o->index < sig->nparams ? sig->params[o->index].name : "?"); break;
    case TL_RX_NEG:
      if (sp < 1) {
        ok = false;
        break;
      }
      tl_strbuf_printf(&t, "-(%s)", st[sp - 1]);
      free(st[--sp]);
      break;
    case TL_RX_BIN:
      if (sp < 2 || o->op > TL_RXB_CEILDIV) {
        ok = false;
        break;
      }
      if (o->op >= TL_RXB_MIN) tl_strbuf_printf(&t, "T.%s(%s, %s)", binops[o->op], st[sp - 2], st[sp - 1]);
      else tl_strbuf_printf(&t, "(%s %s %s)", st[sp - 2], binops[o->op], st[sp - 1]);
      free(st[--sp]);
      free(st[--sp]);
      break;
    default: ok = false; break;
    }
    if (!ok) {
      tl_strbuf_free(&t);
      break;
    }
    st[sp++] = tl_strbuf_take(&t);
    if (!st[sp - 1]) {
      ok = false;
      sp--;
    }
  }
  tl_strbuf_append(s, ok && sp == 1 ? st[0] : "<expr>");
  for (int i = 0; i < sp; i++) free(st[i]);
  free(st);
}
