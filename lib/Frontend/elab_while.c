/* The elaborator's `while` statement (elab_stmt.c hands TL_AST_WHILE here):
 * Python's `while cond: body` in a @T.prim_func as a TL_STMT_WHILE (TVM's
 * tir.While). */
#include "Frontend/elab_impl.h"

/* `while cond: body` (TVMScript's T.While, tir.While): cond is evaluated
 * before each iteration.  A compile-time false condition elaborates to
 * nothing; a compile-time true one would never end (there is no 'break').
 * That every thread of the block sees the same condition is checked on the
 * tile IR (lib/Lower/uniform.c). */
bool tl_el_while(elab *E, const tl_ast_stmt *s, stmt_vec *out) {
  if (s->u.whiles.orelse.n) {
    err(E, s->u.whiles.orelse.stmts[0]->loc, "'else' after a 'while' loop is not supported in a @T.prim_func");
    return false;
  }
  const tl_ast_expr *test = s->u.whiles.test;
  val *c = eval(E, test);
  if (!c) return false;
  bool t;
  if (!is_ir(c) && truthy(c, &t)) {
    if (!t) return true;
    err(E, test->loc,
        "the condition of this 'while' loop is always true ('break' is not supported): the loop "
        "would never end");
    return false;
  }
  tl_expr *ce = to_expr(E, c, test->loc);
  if (!ce) return false;
  if (ce->dtype.code == TL_TYPE_INT || ce->dtype.code == TL_TYPE_UINT) {
    tl_expr *zero = tl_ir_int(E->m, test->loc, ce->dtype, 0);
    if (!zero || !(ce = chk(E, tl_ir_binary(E->m, test->loc, TL_OP_NE, ce, zero)))) return false;
  } else if (ce->dtype.code != TL_TYPE_BOOL) {
    err(E, test->loc, "the condition of a 'while' loop must be a bool or an integer, got %s", tl_dtype_name(ce->dtype));
    return false;
  }
  tl_stmt *body = tl_el_body(E, &s->u.whiles.body, s->loc);
  if (!body) return false;
  tl_stmt *w = tl_ir_while(E->m, s->loc, ce, body);
  if (!w || !tl_vec_push(out, w)) return oom(E), false;
  return true;
}
