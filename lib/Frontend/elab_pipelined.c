/* Loop keywords for the elaborator's loops (elab_stmt.c): T.Parallel's
 * hints (tl_el_parallel_hints, at the end), and T.Pipelined's schedule
 * keywords order=, stage= and group=: their values are checked against the
 * elaborated loop body and stored, group= expanded, as one order and one
 * stage per scheduled statement (tl_stmt loop.nsched/order/stage, tir.h).
 *
 * Meaning (TileLang's, after TVM's software pipelining; docs/canonical-tir.md
 * "T.Pipelined schedules"): the scheduled statements are the body's top-level
 * statements other than LETs (scalar binds) and allocations, numbered in body
 * order.  stage[i] says how many iterations behind stage 0 statement i runs
 * (0..num_stages-1; num_stages defaults to max(stage) + 1), order[i] its
 * position within one iteration of the pipelined loop (a permutation).  With
 * group=, a list of lists of statement numbers that splits 0..n-1 into
 * consecutive runs, order and stage have one entry per group and every
 * statement takes its group's; statements keep their body order inside a
 * group.  Errors are located at the keyword value (or the list element) at
 * fault: a wrong length, a value that is not a constant integer, a stage out
 * of range, an order that repeats or leaves out a position, a group list that
 * is not consecutive runs covering every statement. */
#include "Frontend/elab_impl.h"

/* The scheduled statements of loop body b: top-level, not LET or ALLOC. */
static int count_sched(const tl_stmt *b) {
  int n = b->kind == TL_STMT_SEQ ? b->u.seq.n : 1, c = 0;
  const tl_stmt *const *xs = b->kind == TL_STMT_SEQ ? (const tl_stmt *const *)b->u.seq.stmts : &b;
  for (int i = 0; i < n; i++)
    if (xs[i] && xs[i]->kind != TL_STMT_LET && xs[i]->kind != TL_STMT_ALLOC) c++;
  return c;
}

/* The constant integer list of keyword k (a list or tuple of ints) into
 * *out (talloc'd, *n entries), item locations into *locs (the item's own
 * when k's value is written as a literal list, else the keyword value's). */
static bool int_list(elab *E, const tl_ast_keyword *k, const char *what, int64_t **out, tl_loc **locs, int *n) {
  val *v = eval(E, k->value);
  if (!v) return false;
  if (v->k != V_TUPLE) {
    err(E, k->value->loc, "T.Pipelined: %s must be a list of integers", what);
    return false;
  }
  const tl_ast_expr *ax = k->value;
  bool lit = (ax->kind == TL_AST_LIST || ax->kind == TL_AST_TUPLE) && ax->u.list.n == v->u.tup.n;
  *n = v->u.tup.n;
  *out = talloc(E, sizeof(int64_t) * (size_t)(*n + 1));
  *locs = talloc(E, sizeof(tl_loc) * (size_t)(*n + 1));
  if (!*out || !*locs) return false;
  for (int i = 0; i < *n; i++) {
    (*locs)[i] = lit ? ax->u.list.items[i]->loc : ax->loc;
    if (!to_const_int(E, v->u.tup.items[i], (*locs)[i], what, &(*out)[i])) return false;
  }
  return true;
}

/* group=: the statement ranges [first[g], first[g + 1]) of each group. */
static bool group_ranges(elab *E, const tl_ast_keyword *k, int nstmt, int **first, int *ngroups) {
  val *v = eval(E, k->value);
  if (!v) return false;
  if (v->k != V_TUPLE) {
    err(E, k->value->loc, "T.Pipelined: group must be a list of lists of statement numbers");
    return false;
  }
  const tl_ast_expr *ax = k->value;
  bool lit = (ax->kind == TL_AST_LIST || ax->kind == TL_AST_TUPLE) && ax->u.list.n == v->u.tup.n;
  int ng = v->u.tup.n, next = 0;
  *first = talloc(E, sizeof(int) * (size_t)(ng + 2));
  if (!*first) return false;
  for (int g = 0; g < ng; g++) {
    tl_loc gl = lit ? ax->u.list.items[g]->loc : ax->loc;
    val *gv = v->u.tup.items[g];
    if (gv->k != V_TUPLE || gv->u.tup.n == 0) {
      err(E, gl, "T.Pipelined: group %d must be a non-empty list of statement numbers", g);
      return false;
    }
    (*first)[g] = next;
    for (int j = 0; j < gv->u.tup.n; j++) {
      int64_t x;
      if (!to_const_int(E, gv->u.tup.items[j], gl, "a statement number", &x)) return false;
      if (x != next) {
        err(E, gl,
            "T.Pipelined: group %d: expected statement %d next (groups are consecutive runs of the "
            "loop body's %d statements, in order), got %lld",
            g, next, nstmt, (long long)x);
        return false;
      }
      next++;
    }
  }
  if (next != nstmt) {
    err(E, ax->loc,
        "T.Pipelined: group covers %d of the loop body's %d statements (LETs and allocations "
        "not counted)",
        next, nstmt);
    return false;
  }
  (*first)[ng] = next;
  *ngroups = ng;
  return true;
}

bool tl_el_pipelined_schedule(elab *E, const tl_ast_expr *it, tl_stmt *loop) {
  const tl_ast_keyword *ko = find_kw(it, "order"), *ks = find_kw(it, "stage"), *kg = find_kw(it, "group");
  if (!ko && !ks && !kg) return true;
  if (!ko || !ks) {
    const tl_ast_keyword *k = ko ? ko : ks ? ks : kg;
    err(E, k->value->loc, "T.Pipelined: %s needs %s",
        ko   ? "order"
        : ks ? "stage"
             : "group",
        ko   ? "stage= too"
        : ks ? "order= too"
             : "order= and stage=");
    return false;
  }
  int nstmt = count_sched(loop->u.loop.body);
  int *first = NULL, nunits = nstmt;
  if (kg && !group_ranges(E, kg, nstmt, &first, &nunits)) return false;
  int64_t *ord, *stg;
  tl_loc *ol, *sl;
  int no, ns;
  if (!int_list(E, ko, "order", &ord, &ol, &no) || !int_list(E, ks, "stage", &stg, &sl, &ns)) return false;
  const char *unit = kg ? "group" : "statement";
  for (int w = 0; w < 2; w++) {
    int got = w ? ns : no;
    if (got != nunits) {
      err(E, (w ? ks : ko)->value->loc, "T.Pipelined: %s has %d entr%s but the loop %s %d %s%s%s",
          w ? "stage" : "order", got, got == 1 ? "y" : "ies", kg ? "has" : "body has", nunits, unit,
          nunits == 1 ? "" : "s", kg ? "" : " (LETs and allocations not counted)");
      return false;
    }
  }
  int nst = loop->u.loop.num_stages;
  int64_t smax = 0;
  for (int i = 0; i < ns; i++) {
    if (stg[i] < 0 || (nst >= 0 && stg[i] >= (nst > 0 ? nst : 1)) || stg[i] > 1000) {
      if (nst >= 0)
        err(E, sl[i], "T.Pipelined: stage %lld of %s %d is out of range for num_stages=%d (stages 0..%d)",
            (long long)stg[i], unit, i, nst, nst > 0 ? nst - 1 : 0);
      else
        err(E, sl[i], "T.Pipelined: stage %lld of %s %d is out of range (stages are 0 or more)", (long long)stg[i],
            unit, i);
      return false;
    }
    if (stg[i] > smax) smax = stg[i];
  }
  bool *seen = talloc(E, sizeof(bool) * (size_t)(no + 1));
  if (!seen) return false;
  memset(seen, 0, sizeof(bool) * (size_t)(no + 1));
  for (int i = 0; i < no; i++) {
    if (ord[i] < 0 || ord[i] >= no) {
      err(E, ol[i], "T.Pipelined: order %lld of %s %d is out of range (positions 0..%d)", (long long)ord[i], unit, i,
          no - 1);
      return false;
    }
    if (seen[ord[i]]) {
      err(E, ol[i], "T.Pipelined: order %lld is given to two %ss (each position once)", (long long)ord[i], unit);
      return false;
    }
    seen[ord[i]] = true;
  }
  /* one entry per statement: a group's statements take consecutive positions */
  int *o = malloc_ir(E, sizeof(int) * (size_t)(nstmt + 1)), *s = malloc_ir(E, sizeof(int) * (size_t)(nstmt + 1));
  if (!o || !s) return false;
  int pos = 0;
  for (int p = 0; p < nunits; p++)
    for (int u = 0; u < nunits; u++) {
      if (ord[u] != p) continue;
      int lo = kg ? first[u] : u, hi = kg ? first[u + 1] : u + 1;
      for (int i = lo; i < hi; i++) {
        o[i] = pos++;
        s[i] = (int)stg[u];
      }
    }
  loop->u.loop.nsched = nstmt;
  loop->u.loop.order = o;
  loop->u.loop.stage = s;
  if (nst < 0) loop->u.loop.num_stages = (int)smax + 1;
  return true;
}

/* T.Parallel's keywords (tilelang/language/loop.py): prefer_async (a bool:
 * TileLang turns the loop's global -> shared stores into cp.async even
 * outside a pipelined loop), coalesced_width (an int: its vector width) and
 * annotations (a dict; the known key "parallel_async_without_async_commit_wait"
 * says the kernel commits and waits those copies itself) are hints about
 * how the copies are issued.  The loop here stores synchronously, which
 * gives the values TileLang's asynchronous copies give once waited for (the
 * barriers pass orders the stores before their readers); a T.ptx_wait_group
 * then finds nothing in flight.  loop_layout (which thread runs which
 * element) is refused. */
bool tl_el_parallel_hints(elab *E, const tl_ast_expr *it, const char *fn) {
  static const char *const kws[] = {"prefer_async", "coalesced_width", "annotations", NULL};
  static const char *const known[] = {"parallel_async_without_async_commit_wait", "parallel_prefer_async", NULL};
  if (!check_kws(E, it, fn, kws)) return false;
  const tl_ast_keyword *k = find_kw(it, "prefer_async");
  val *v = k ? eval(E, k->value) : NULL;
  bool b;
  if (k && (!v || (v->k != V_NONE && (is_ir(v) || !truthy(v, &b))))) {
    if (v) err_val(E, k->value->loc, v, "%s: prefer_async must be a compile-time bool, got %s", fn, describe(E, v));
    return false;
  }
  k = find_kw(it, "coalesced_width");
  v = k ? eval(E, k->value) : NULL;
  int64_t w;
  if (k && (!v || (v->k != V_NONE && !to_const_int(E, v, k->value->loc, "a coalesced width", &w)))) return false;
  k = find_kw(it, "annotations");
  v = k ? eval(E, k->value) : NULL;
  if (k && (!v || (v->k != V_NONE && v->k != V_DICT))) {
    if (v) err_val(E, k->value->loc, v, "%s: annotations must be a dict, got %s", fn, describe(E, v));
    return false;
  }
  for (int i = 0; v && v->k == V_DICT && i < v->u.dict.n; i++) {
    const val *key = v->u.dict.keys[i];
    if (key->k != V_STR || !in_list(known, key->u.s)) {
      err_val(E, v->u.dict.klocs[i], key, "%s: the annotation %s is not supported (known: %s, %s)", fn,
              describe(E, key), known[0], known[1]);
      return false;
    }
  }
  return true;
}

/* T.copy's annotations= (tilelang/language/copy_op.py: a dict whose values take precedence over the keywords
 * of the same name): "coalesced_width" and "disable_tma" are returned as the values of those attributes
 * (*cw, *dt; NULL when absent); "prefer_instruction" "sync" means disable_tma (a synchronous copy; "tma" and
 * "cp_async" are preferences the lowering makes on its own); "eviction_policy" (0-2 or
 * "evict_normal/first/last") is a cache hint, accepted and not emitted.  Another key (T.WSID, sm_100's warp
 * roles; "parallel_loop_layout") is a located error naming it. */
static bool copy_annotation_values(elab *E, const tl_ast_keyword *k, const char *fn, val **cw, val **dt) {
  static const char *const known[] = {"coalesced_width", "disable_tma", "prefer_instruction", "eviction_policy", NULL};
  static const char *const instrs[] = {"tma", "cp_async", "sync", NULL};
  static const char *const evicts[] = {"evict_normal", "evict_first", "evict_last", NULL};
  val *v = eval(E, k->value);
  *cw = *dt = NULL;
  if (!v) return false;
  if (v->k == V_NONE) return true;
  if (v->k != V_DICT)
    return err_val(E, k->value->loc, v, "%s: annotations must be a dict, got %s", fn, describe(E, v)), false;
  for (int i = 0; i < v->u.dict.n; i++) {
    val *key = v->u.dict.keys[i], *x = v->u.dict.vals[i];
    tl_loc at = v->u.dict.klocs[i], vat = v->u.dict.vlocs[i];
    if (key->k != V_STR || !in_list(known, key->u.s))
      return err_val(E, at, key, "%s: the annotation %s is not supported (known: %s, %s, %s, %s)", fn, describe(E, key),
                     known[0], known[1], known[2], known[3]),
             false;
    if (!strcmp(key->u.s, "coalesced_width")) *cw = x;
    else if (!strcmp(key->u.s, "disable_tma")) *dt = x;
    else if (!strcmp(key->u.s, "prefer_instruction")) {
      if (x->k != V_STR || !in_list(instrs, x->u.s))
        return err_val(E, vat, x, "%s: prefer_instruction must be \"tma\", \"cp_async\" or \"sync\", got %s", fn,
                       describe(E, x)),
               false;
      if (!strcmp(x->u.s, "sync") && !*dt) *dt = mk_bool(E, true);
    } else if (x->k == V_STR ? !in_list(evicts, x->u.s) : x->k != V_INT || x->u.i < 0 || x->u.i > 2)
      return err_val(E, vat, x,
                     "%s: eviction_policy must be 0, 1, 2 or \"evict_normal\", \"evict_first\", "
                     "\"evict_last\", got %s",
                     fn, describe(E, x)),
             false;
  }
  return true;
}

bool tl_el_copy_annotations(elab *E, int op, const tl_ast_keyword *k, const char *fn, tl_expr **attrs, bool *given,
                            bool *by_ann) {
  val *an[2];
  int before = E->nerr;
  if (!copy_annotation_values(E, k, fn, &an[0], &an[1])) return false;
  for (int j = 0; j < 2; j++) {
    int ai = an[j] ? tl_tile_op_attr_index(op, j ? "disable_tma" : "coalesced_width") : -1;
    if (ai >= 0) given[ai] = by_ann[ai] = true, attrs[ai] = attr_value(E, op, ai, an[j], k->value->loc);
  }
  return E->nerr == before;
}
