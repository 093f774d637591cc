/* Unit tests of the Python-subset lexer and parser (lib/Frontend/lexer.c,
 * parser.c) and the AST printer (ast_print.c): precedence and
 * associativity (checked by printing with minimal parentheses and by
 * inspecting nodes), chained comparisons, slices, calls with keywords,
 * decorators, indentation, line joining, literals, node locations, every
 * syntax error message with its line:col, depth limits, and robustness on
 * mutated input. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "Frontend/ast.h"
#include "Frontend/lexer.h"

typedef struct parsed {
  tl_arena a;
  tl_intern in;
  tl_diag d;
  tl_ast_module m;
  bool ok;
} parsed;

static parsed *parse_n(const char *src, size_t len) {
  parsed *p = calloc(1, sizeof *p);
  cr_assert_not_null(p);
  tl_arena_init(&p->a);
  tl_intern_init(&p->in, &p->a);
  tl_diag_init(&p->d);
  tl_diag_add_source(&p->d, "t.py", src, len);
  p->ok = tl_parse_python(&p->a, &p->in, &p->d, src, len, "t.py", &p->m);
  return p;
}
static parsed *parse(const char *src) { return parse_n(src, strlen(src)); }

static void done(parsed *p) {
  tl_diag_free(&p->d);
  tl_intern_free(&p->in);
  tl_arena_free(&p->a);
  free(p);
}

static parsed *parse_ok(const char *src) {
  parsed *p = parse(src);
  cr_assert(p->ok, "parse failed for <<%s>>:\n%s", src, p->d.out.data ? p->d.out.data : "");
  return p;
}

/* The value of the single statement `x = EXPR`. */
static const tl_ast_expr *value_of(parsed *p) {
  cr_assert_eq(p->m.body.n, 1);
  const tl_ast_stmt *s = p->m.body.stmts[0];
  cr_assert_eq(s->kind, TL_AST_ASSIGN);
  return s->u.assign.value;
}

/* Parses "x = SRC" and prints the value back. */
static void check_print(const char *src, const char *want) {
  char *text = NULL;
  size_t n = strlen(src) + 8;
  text = malloc(n);
  snprintf(text, n, "x = %s\n", src);
  parsed *p = parse_ok(text);
  tl_strbuf sb = {0};
  tl_ast_print_expr(&sb, value_of(p));
  cr_assert_str_eq(sb.data ? sb.data : "", want, "printing %s", src);
  tl_strbuf_free(&sb);
  done(p);
  free(text);
}

/* Expects a parse error at line:col whose message contains msg. */
static void check_error(const char *src, int line, int col, const char *msg) {
  parsed *p = parse(src);
  cr_assert(!p->ok, "expected an error for <<%s>>", src);
  cr_assert_eq(p->d.errors, 1, "one error only for <<%s>>:\n%s", src, p->d.out.data);
  cr_assert_not_null(p->d.first_message);
  cr_assert(strstr(p->d.first_message, msg) != NULL, "message <<%s>> lacks <<%s>> for <<%s>>", p->d.first_message, msg,
            src);
  cr_assert_eq(p->d.first_error.line, line, "line %d, want %d for <<%s>> (%s)", p->d.first_error.line, line, src,
               p->d.first_message);
  cr_assert_eq(p->d.first_error.col, col, "col %d, want %d for <<%s>> (%s)", p->d.first_error.col, col, src,
               p->d.first_message);
  cr_assert_str_eq(p->d.first_error.file, "t.py");
  done(p);
}

/* ------------------------------------------------------------ precedence */

Test(parser, precedence_print) {
  check_print("1 + 2 * 3", "1 + 2 * 3");
  check_print("(1 + 2) * 3", "(1 + 2) * 3");
  check_print("1 - (2 - 3)", "1 - (2 - 3)");
  check_print("(1 - 2) - 3", "1 - 2 - 3");
  check_print("-2**2", "-2 ** 2");
  check_print("(-2)**2", "(-2) ** 2");
  check_print("2**-1", "2 ** -1");
  check_print("2**3**4", "2 ** 3 ** 4");
  check_print("(2**3)**4", "(2 ** 3) ** 4");
  check_print("a | b ^ c & d << e + f * g", "a | b ^ c & d << e + f * g");
  check_print("((a | b) ^ c) & d", "((a | b) ^ c) & d");
  check_print("a // b % c @ d / e", "a // b % c @ d / e");
  check_print("not a == b", "not a == b");
  check_print("(not a) == b", "(not a) == b");
  check_print("a and b or c and not d", "a and b or c and not d");
  check_print("a and (b or c)", "a and (b or c)");
  check_print("[i * 2 for i in range(4) if i > 1]", "[i * 2 for i in range(4) if i > 1]");
  check_print("{k: v for (k, v) in d}", "{k: v for (k, v) in d}");
  check_print("(y := a + 1)", "y := a + 1"); /* messages only: no parentheses kept */
  check_print("a if b else c if d else e", "a if b else c if d else e");
  check_print("(a if b else c) if d else e", "(a if b else c) if d else e");
  check_print("~-+x", "~-+x");
  check_print("a.b.c(d)[e](f).g", "a.b.c(d)[e](f).g");
  check_print("(a + b).c", "(a + b).c");
  check_print("x[1:2, ::3, :, i]", "x[1:2, ::3, :, i]");
  check_print("x[a:]", "x[a:]");
  check_print("x[:b]", "x[:b]");
  check_print("x[::]", "x[:]");
  check_print("f(a, b, k=v, m=1,)", "f(a, b, k=v, m=1)");
  check_print("()", "()");
  check_print("(a,)", "(a,)");
  check_print("(a, b)", "(a, b)");
  check_print("[]", "[]");
  check_print("[1, [2, 3],]", "[1, [2, 3]]");
  check_print("{}", "{}");
  check_print("{'a': 1, \"b\": [2]}", "{\"a\": 1, \"b\": [2]}");
  check_print("a, b", "(a, b)");
  check_print("a < b <= c == d != e > f >= g", "a < b <= c == d != e > f >= g");
  check_print("a in b", "a in b");
  check_print("a not in b", "a not in b");
  check_print("a is not None", "a is not None");
  check_print("True or False and None", "True or False and None");
}

Test(parser, unary_minus_power_structure) {
  parsed *p = parse_ok("x = -2**2\n");
  const tl_ast_expr *e = value_of(p);
  cr_assert_eq(e->kind, TL_AST_UNARY);
  cr_assert_str_eq(e->u.un.op, "-");
  cr_assert_eq(e->u.un.x->kind, TL_AST_BINOP);
  cr_assert_str_eq(e->u.un.x->u.bin.op, "**");
  cr_assert_eq(e->u.un.x->u.bin.l->kind, TL_AST_INT);
  cr_assert_eq(e->u.un.x->u.bin.l->u.ival, 2);
  done(p);

  p = parse_ok("x = 2**-1\n");
  e = value_of(p);
  cr_assert_eq(e->kind, TL_AST_BINOP);
  cr_assert_eq(e->u.bin.r->kind, TL_AST_UNARY);
  done(p);

  /* right associativity */
  p = parse_ok("x = a ** b ** c\n");
  e = value_of(p);
  cr_assert_eq(e->kind, TL_AST_BINOP);
  cr_assert_eq(e->u.bin.l->kind, TL_AST_NAME);
  cr_assert_eq(e->u.bin.r->kind, TL_AST_BINOP);
  done(p);

  /* left associativity */
  p = parse_ok("x = a - b - c\n");
  e = value_of(p);
  cr_assert_eq(e->u.bin.l->kind, TL_AST_BINOP);
  cr_assert_eq(e->u.bin.r->kind, TL_AST_NAME);
  done(p);
}

Test(parser, operators_interned) {
  parsed *p = parse_ok("x = a + b\ny = c + d\n");
  const tl_ast_expr *a = p->m.body.stmts[0]->u.assign.value;
  const tl_ast_expr *b = p->m.body.stmts[1]->u.assign.value;
  cr_assert_eq(a->u.bin.op, b->u.bin.op);
  cr_assert_eq(a->u.bin.op, tl_intern_str(&p->in, "+"));
  cr_assert_eq(a->u.bin.l->u.name, tl_intern_str(&p->in, "a"));
  cr_assert_eq(a->u.bin.op_loc.line, 1);
  cr_assert_eq(a->u.bin.op_loc.col, 7);
  done(p);
}

Test(parser, chained_comparison) {
  parsed *p = parse_ok("x = a < b <= c not in d\n");
  const tl_ast_expr *e = value_of(p);
  cr_assert_eq(e->kind, TL_AST_COMPARE);
  cr_assert_eq(e->u.cmp.n, 3);
  cr_assert_str_eq(e->u.cmp.ops[0], "<");
  cr_assert_str_eq(e->u.cmp.ops[1], "<=");
  cr_assert_str_eq(e->u.cmp.ops[2], "not in");
  cr_assert_str_eq(e->u.cmp.operands[0]->u.name, "a");
  cr_assert_str_eq(e->u.cmp.operands[3]->u.name, "d");
  cr_assert_eq(e->u.cmp.op_locs[1].col, 11);
  done(p);
}

Test(parser, slices) {
  parsed *p = parse_ok("x = A[by * 128:by * 128 + 128, ::2, 3, :]\n");
  const tl_ast_expr *e = value_of(p);
  cr_assert_eq(e->kind, TL_AST_SUBSCRIPT);
  cr_assert_eq(e->u.sub.n, 4);
  const tl_ast_expr *s0 = e->u.sub.items[0];
  cr_assert_eq(s0->kind, TL_AST_SLICE);
  cr_assert_eq(s0->u.slice.lo->kind, TL_AST_BINOP);
  cr_assert_eq(s0->u.slice.hi->kind, TL_AST_BINOP);
  cr_assert_null(s0->u.slice.step);
  cr_assert_eq(s0->loc.col, 7);
  const tl_ast_expr *s1 = e->u.sub.items[1];
  cr_assert_eq(s1->kind, TL_AST_SLICE);
  cr_assert_null(s1->u.slice.lo);
  cr_assert_null(s1->u.slice.hi);
  cr_assert_eq(s1->u.slice.step->u.ival, 2);
  cr_assert_eq(e->u.sub.items[2]->kind, TL_AST_INT);
  const tl_ast_expr *s3 = e->u.sub.items[3];
  cr_assert_eq(s3->kind, TL_AST_SLICE);
  cr_assert_null(s3->u.slice.lo);
  cr_assert_null(s3->u.slice.hi);
  done(p);
}

Test(parser, call_keywords) {
  parsed *p = parse_ok("T.gemm(A, B, C, transpose_B=True, policy=T.GemmWarpPolicy.FullRow,)\n");
  cr_assert_eq(p->m.body.n, 1);
  const tl_ast_stmt *s = p->m.body.stmts[0];
  cr_assert_eq(s->kind, TL_AST_EXPR_STMT);
  const tl_ast_expr *e = s->u.expr;
  cr_assert_eq(e->kind, TL_AST_CALL);
  cr_assert_eq(e->u.call.nargs, 3);
  cr_assert_eq(e->u.call.nkw, 2);
  cr_assert_str_eq(e->u.call.kw[0].name, "transpose_B");
  cr_assert_eq(e->u.call.kw[0].value->kind, TL_AST_TRUE);
  cr_assert_eq(e->u.call.kw[0].loc.col, 17);
  cr_assert_str_eq(e->u.call.kw[1].name, "policy");
  cr_assert_eq(e->u.call.kw[1].value->kind, TL_AST_ATTR);
  cr_assert_str_eq(e->u.call.kw[1].value->u.attr.name, "FullRow");
  cr_assert_eq(e->u.call.func->kind, TL_AST_ATTR);
  cr_assert_eq(e->loc.col, 1);
  done(p);

  p = parse_ok("f()\n");
  e = p->m.body.stmts[0]->u.expr;
  cr_assert_eq(e->u.call.nargs, 0);
  cr_assert_eq(e->u.call.nkw, 0);
  done(p);
}

Test(parser, decorators_and_def) {
  parsed *p = parse_ok(
      "@tilelang.jit(out_idx=[-1])\n"
      "@other\n"
      "def matmul(M, N, K, block_M=128, dtype: str = \"float16\") -> int:\n"
      "    @T.prim_func\n"
      "    def main(A: T.Tensor((M, K), dtype)):\n"
      "        pass\n"
      "    return main\n");
  cr_assert_eq(p->m.body.n, 1);
  const tl_ast_stmt *d = p->m.body.stmts[0];
  cr_assert_eq(d->kind, TL_AST_DEF);
  cr_assert_eq(d->loc.line, 3);
  cr_assert_eq(d->loc.col, 1);
  cr_assert_str_eq(d->u.def.name, "matmul");
  cr_assert_eq(d->u.def.name_loc.col, 5);
  cr_assert_eq(d->u.def.ndecorators, 2);
  cr_assert_eq(d->u.def.decorators[0]->kind, TL_AST_CALL);
  cr_assert_eq(d->u.def.decorators[1]->kind, TL_AST_NAME);
  cr_assert_eq(d->u.def.nparams, 5);
  cr_assert_str_eq(d->u.def.params[3].name, "block_M");
  cr_assert_eq(d->u.def.params[3].default_value->u.ival, 128);
  cr_assert_null(d->u.def.params[3].annotation);
  cr_assert_eq(d->u.def.params[4].annotation->kind, TL_AST_NAME);
  cr_assert_str_eq(d->u.def.params[4].default_value->u.str, "float16");
  cr_assert_eq(d->u.def.params[4].loc.col, 34);
  cr_assert_not_null(d->u.def.returns);
  cr_assert_eq(d->u.def.body.n, 2);
  const tl_ast_stmt *inner = d->u.def.body.stmts[0];
  cr_assert_eq(inner->kind, TL_AST_DEF);
  cr_assert_eq(inner->u.def.ndecorators, 1);
  cr_assert_eq(inner->u.def.nparams, 1);
  cr_assert_eq(inner->u.def.params[0].annotation->kind, TL_AST_CALL);
  cr_assert_eq(d->u.def.body.stmts[1]->kind, TL_AST_RETURN);
  done(p);
}

Test(parser, indentation_blocks) {
  parsed *p = parse_ok(
      "if a:\n"
      "    if b:\n"
      "        x = 1\n"
      "\n"
      "   # a comment at another indentation\n"
      "        y = 2\n"
      "    z = 3\n"
      "elif c:\n"
      "\tw = 4\n"
      "else:\n"
      "  v = 5\n"
      "u = 6\n");
  cr_assert_eq(p->m.body.n, 2);
  const tl_ast_stmt *s = p->m.body.stmts[0];
  cr_assert_eq(s->kind, TL_AST_IF);
  cr_assert_eq(s->u.ifs.body.n, 2);
  const tl_ast_stmt *in = s->u.ifs.body.stmts[0];
  cr_assert_eq(in->kind, TL_AST_IF);
  cr_assert_eq(in->u.ifs.body.n, 2);
  cr_assert_eq(in->u.ifs.orelse.n, 0);
  cr_assert_eq(s->u.ifs.orelse.n, 1);
  const tl_ast_stmt *el = s->u.ifs.orelse.stmts[0];
  cr_assert_eq(el->kind, TL_AST_IF);
  cr_assert_eq(el->loc.line, 8);
  cr_assert_eq(el->u.ifs.body.n, 1);
  cr_assert_eq(el->u.ifs.orelse.n, 1);
  cr_assert_eq(el->u.ifs.orelse.stmts[0]->loc.line, 11);
  cr_assert_eq(el->u.ifs.orelse.stmts[0]->loc.col, 3);
  cr_assert_eq(p->m.body.stmts[1]->loc.line, 12);
  done(p);

  /* dedent of several levels at once, and at EOF without a final newline */
  p = parse_ok("def f():\n  for i in x:\n    with a as b:\n      pass\ny = 1\ndef g():\n  if x:\n    return");
  cr_assert_eq(p->m.body.n, 3);
  done(p);
}

Test(parser, simple_suites_and_semicolons) {
  parsed *p = parse_ok("if x: a = 1; b = 2;\nfor i in r: pass\nwhile y: break\n");
  cr_assert_eq(p->m.body.n, 3);
  cr_assert_eq(p->m.body.stmts[0]->u.ifs.body.n, 2);
  cr_assert_eq(p->m.body.stmts[1]->kind, TL_AST_FOR);
  cr_assert_eq(p->m.body.stmts[2]->kind, TL_AST_WHILE);
  cr_assert_eq(p->m.body.stmts[2]->u.whiles.body.stmts[0]->kind, TL_AST_BREAK);
  done(p);
}

Test(parser, line_joining) {
  parsed *p = parse_ok(
      "x = f(a,\n"
      "      b,   # comment\n"
      "\n"
      "  c)\n"
      "y = [1,\n"
      "2] + \\\n"
      "    [3]\n"
      "z = {\n"
      "  'k': (1,\n"
      "        2),\n"
      "}\n");
  cr_assert_eq(p->m.body.n, 3);
  cr_assert_eq(p->m.body.stmts[0]->u.assign.value->u.call.nargs, 3);
  cr_assert_eq(p->m.body.stmts[1]->loc.line, 5);
  cr_assert_eq(p->m.body.stmts[2]->loc.line, 8);
  cr_assert_eq(p->m.body.stmts[2]->u.assign.value->u.dict.n, 1);
  done(p);
}

Test(parser, statements) {
  parsed *p = parse_ok(
      "import tilelang\n"
      "import tilelang.language as T, numpy\n"
      "from a.b import c\n"
      "from a import (d as e, f,)\n"
      "a = b = c\n"
      "a, b = b, a\n"
      "(a, b) = [c, d] = e\n"
      "A[i, j] += 1\n"
      "x.y -= 2\n"
      "k //= 3; k **= 2; k %= 5; k &= 1; k |= 2; k ^= 3; k <<= 1; k >>= 1; k *= 2; k /= 2\n"
      "q: T.int32 = 5\n"
      "r: int\n"
      "for a, b in zip(x, y):\n"
      "    continue\n"
      "with T.Kernel(8, 8, threads=128) as (bx, by):\n"
      "    pass\n"
      "with ctx:\n"
      "    pass\n"
      "return\n"
      "return a, b\n");
  tl_ast_stmt **s = p->m.body.stmts;
  int i = 0;
  cr_assert_eq(s[i]->kind, TL_AST_IMPORT);
  cr_assert_str_eq(s[i]->u.import.module, "tilelang");
  cr_assert_null(s[i]->u.import.name);
  cr_assert_null(s[i]->u.import.alias);
  i++;
  cr_assert_str_eq(s[i]->u.import.module, "tilelang.language");
  cr_assert_str_eq(s[i]->u.import.alias, "T");
  i++;
  cr_assert_str_eq(s[i]->u.import.module, "numpy");
  i++;
  cr_assert_str_eq(s[i]->u.import.module, "a.b");
  cr_assert_str_eq(s[i]->u.import.name, "c");
  i++;
  cr_assert_str_eq(s[i]->u.import.name, "d");
  cr_assert_str_eq(s[i]->u.import.alias, "e");
  i++;
  cr_assert_str_eq(s[i]->u.import.name, "f");
  cr_assert_null(s[i]->u.import.alias);
  i++;
  cr_assert_eq(s[i]->kind, TL_AST_ASSIGN);
  cr_assert_eq(s[i]->u.assign.ntargets, 2);
  i++;
  cr_assert_eq(s[i]->u.assign.ntargets, 1);
  cr_assert_eq(s[i]->u.assign.targets[0]->kind, TL_AST_TUPLE);
  cr_assert_eq(s[i]->u.assign.value->kind, TL_AST_TUPLE);
  i++;
  cr_assert_eq(s[i]->u.assign.ntargets, 2);
  cr_assert_eq(s[i]->u.assign.targets[1]->kind, TL_AST_LIST);
  i++;
  cr_assert_eq(s[i]->kind, TL_AST_AUGASSIGN);
  cr_assert_str_eq(s[i]->u.aug.op, "+");
  cr_assert_eq(s[i]->u.aug.target->kind, TL_AST_SUBSCRIPT);
  i++;
  cr_assert_str_eq(s[i]->u.aug.op, "-");
  i++;
  const char *ops[] = {"//", "**", "%", "&", "|", "^", "<<", ">>", "*", "/"};
  for (int k = 0; k < 10; k++, i++) {
    cr_assert_eq(s[i]->kind, TL_AST_AUGASSIGN);
    cr_assert_str_eq(s[i]->u.aug.op, ops[k]);
  }
  cr_assert_eq(s[i]->kind, TL_AST_ANNASSIGN);
  cr_assert_eq(s[i]->u.ann.value->u.ival, 5);
  i++;
  cr_assert_eq(s[i]->kind, TL_AST_ANNASSIGN);
  cr_assert_null(s[i]->u.ann.value);
  i++;
  cr_assert_eq(s[i]->kind, TL_AST_FOR);
  cr_assert_eq(s[i]->u.loop.target->kind, TL_AST_TUPLE);
  cr_assert_eq(s[i]->u.loop.target->u.list.n, 2);
  cr_assert_eq(s[i]->u.loop.body.stmts[0]->kind, TL_AST_CONTINUE);
  i++;
  cr_assert_eq(s[i]->kind, TL_AST_WITH);
  cr_assert_eq(s[i]->u.with.target->kind, TL_AST_TUPLE);
  cr_assert_eq(s[i]->u.with.ctx->u.call.nkw, 1);
  i++;
  cr_assert_eq(s[i]->kind, TL_AST_WITH);
  cr_assert_null(s[i]->u.with.target);
  i++;
  cr_assert_eq(s[i]->kind, TL_AST_RETURN);
  cr_assert_null(s[i]->u.ret);
  i++;
  cr_assert_eq(s[i]->u.ret->kind, TL_AST_TUPLE);
  i++;
  cr_assert_eq(p->m.body.n, i);
  done(p);
}

Test(parser, literals) {
  parsed *p = parse_ok(
      "\"\"\"Module docstring\n  second line\"\"\"\n"
      "a = 0x_Ff + 0o17 + 0b101 + 1_000 + 0 + 00\n"
      "b = [1.5, 1e-3, .5, 2., 1_000.0, 1E+2]\n"
      "c = 'q\\n\\t\\\\\\'\\\"\\x41\\u00e9\\101' r'a\\nb' \"z\"\n"
      "d = -9223372036854775808\n"
      "e = 9223372036854775807\n"
      "f = True, False, None\n"
      "g = '''x\n'y'\n'''\n");
  tl_ast_stmt **s = p->m.body.stmts;
  cr_assert_eq(s[0]->kind, TL_AST_EXPR_STMT);
  cr_assert_str_eq(s[0]->u.expr->u.str, "Module docstring\n  second line");
  const tl_ast_expr *a = s[1]->u.assign.value; /* ((((255 + 15) + 5) + 1000) + 0) + 0 */
  int64_t vals[] = {0, 0, 1000, 5, 15, 255};
  for (int k = 0; k < 5; k++) {
    cr_assert_eq(a->kind, TL_AST_BINOP);
    cr_assert_eq(a->u.bin.r->u.ival, vals[k]);
    a = a->u.bin.l;
  }
  cr_assert_eq(a->u.ival, 255);
  const tl_ast_expr *b = s[2]->u.assign.value;
  double fv[] = {1.5, 1e-3, .5, 2., 1000.0, 100.0};
  for (int k = 0; k < 6; k++) {
    cr_assert_eq(b->u.list.items[k]->kind, TL_AST_FLOAT);
    cr_assert_float_eq(b->u.list.items[k]->u.fval, fv[k], 1e-12);
  }
  cr_assert_str_eq(s[3]->u.assign.value->u.str,
                   "q\n\t\\'\"A\xc3\xa9"
                   "Aa\\nbz");
  cr_assert_eq(s[4]->u.assign.value->kind, TL_AST_INT);
  cr_assert_eq(s[4]->u.assign.value->u.ival, INT64_MIN);
  cr_assert_eq(s[4]->u.assign.value->loc.col, 5);
  cr_assert_eq(s[5]->u.assign.value->u.ival, INT64_MAX);
  const tl_ast_expr *f = s[6]->u.assign.value;
  cr_assert_eq(f->u.list.items[0]->kind, TL_AST_TRUE);
  cr_assert_eq(f->u.list.items[1]->kind, TL_AST_FALSE);
  cr_assert_eq(f->u.list.items[2]->kind, TL_AST_NONE);
  cr_assert_str_eq(s[7]->u.assign.value->u.str, "x\n'y'\n");
  done(p);
}

Test(parser, locations) {
  parsed *p = parse_ok("def f(a):\n    y = (a + b) * c.d[1]\n");
  const tl_ast_stmt *s = p->m.body.stmts[0]->u.def.body.stmts[0];
  cr_assert_eq(s->loc.line, 2);
  cr_assert_eq(s->loc.col, 5);
  cr_assert_str_eq(s->loc.file, "t.py");
  const tl_ast_expr *v = s->u.assign.value;
  cr_assert_eq(v->kind, TL_AST_BINOP);
  cr_assert_eq(v->loc.col, 9);           /* the '(' of the left operand */
  cr_assert_eq(v->u.bin.op_loc.col, 17); /* '*' */
  cr_assert_eq(v->u.bin.l->loc.col, 10); /* a + b starts at a */
  const tl_ast_expr *r = v->u.bin.r;
  cr_assert_eq(r->kind, TL_AST_SUBSCRIPT);
  cr_assert_eq(r->loc.col, 19);
  cr_assert_eq(r->u.sub.value->kind, TL_AST_ATTR);
  cr_assert_eq(r->u.sub.value->u.attr.name_loc.col, 21);
  cr_assert_eq(r->u.sub.items[0]->loc.col, 23);
  done(p);
}

Test(parser, crlf_and_empty) {
  parsed *p = parse_ok("x = 1\r\nif x:\r\n    y = 2\r\n");
  cr_assert_eq(p->m.body.n, 2);
  done(p);
  p = parse_ok("");
  cr_assert_eq(p->m.body.n, 0);
  done(p);
  p = parse_ok("\n\n   \n# only a comment\n");
  cr_assert_eq(p->m.body.n, 0);
  done(p);
}

/* ------------------------------------------------------------ errors */

Test(parser_errors, missing_colon) {
  check_error("def f(a, b)\n    return a\n", 1, 12, "expected ':'");
  check_error("if x\n    pass\n", 1, 5, "expected ':'");
  check_error("for i in range(3)\n    pass\n", 1, 18, "expected ':'");
  check_error("with T.Kernel(8) as bx\n    pass\n", 1, 23, "expected ':'");
  check_error("while x  # c\n    pass\n", 1, 8, "expected ':'");
  check_error("if x:\n    pass\nelse\n    pass\n", 3, 5, "expected ':'");
}

Test(parser_errors, brackets) {
  check_error("def f():\n    x = T.foo(a, b\n    return x\n", 2, 14, "'(' was never closed");
  check_error("x = foo(1, [2, 3\n", 1, 12, "'[' was never closed");
  check_error("x = {1: 2\n", 1, 5, "'{' was never closed");
  check_error("def f(a, b:\n    return a\n", 1, 6, "'(' was never closed");
  check_error("x = foo(1, 2]\n", 1, 13, "closing parenthesis ']' does not match opening parenthesis '('");
  check_error("x = foo(1,\n 2}\n", 2, 3, "closing parenthesis '}' does not match opening parenthesis '(' on line 1");
  check_error("x = 1)\n", 1, 6, "unmatched ')'");
  /* an error inside brackets that are closed later stays the error */
  check_error("x = f(a\n b)\n", 2, 2, "expected ',' or ')', got 'b'");
}

Test(parser_errors, indentation) {
  check_error("if a:\n    if b:\n\tx = 1\n", 3, 2, "inconsistent use of tabs and spaces in indentation");
  check_error("if a:\n    x = 1\n\ty = 2\n", 3, 2, "inconsistent use of tabs and spaces in indentation");
  check_error("if a:\n        x = 1\n    y = 2\n", 3, 5, "unindent does not match any outer indentation level");
  check_error("x = 1\n    y = 2\n", 2, 5, "unexpected indent");
  check_error("  x = 1\n", 1, 3, "unexpected indent");
  check_error("def f():\nreturn 1\n", 2, 1, "expected an indented block after 'def' statement on line 1");
  check_error("def f():\n", 2, 1, "expected an indented block after 'def' statement on line 1");
  check_error("x = 1\nif x:\n\nelse:\n  pass\n", 4, 1, "expected an indented block after 'if' statement on line 2");
  check_error("for i in x:\n  pass\nelse:\npass\n", 4, 1, "expected an indented block after 'else'");
}

Test(parser_errors, tokens) {
  check_error("x = \"abc\ny = 2\n", 1, 5, "unterminated string literal");
  check_error("x = 'abc", 1, 5, "unterminated string literal");
  check_error("x = \"\"\"abc\ny = 2\n", 1, 5, "unterminated triple-quoted string literal");
  check_error("x = f\"a{}\"\n", 1, 9, "f-string: empty expression not allowed");
  check_error("x = 1 $ 2\n", 1, 7, "invalid character '$'");
  check_error("x = 1 ? 2\n", 1, 7, "invalid character '?'");
  check_error("x = 1 \xe2\x82\xac 2\n", 1, 7, "invalid character");
  check_error("x = 1 \xff 2\n", 1, 7, "invalid character");
  check_error("x = '\xc3'\n", 1, 6, "invalid character");
  check_error("# \xed\xa0\x80 surrogate\n", 1, 3, "invalid character");
  check_error("x = 007\n", 1, 5, "leading zeros");
  check_error("x = 1__0\n", 1, 5, "invalid decimal literal");
  check_error("x = 1_\n", 1, 5, "invalid decimal literal");
  check_error("x = 1e\n", 1, 5, "invalid decimal literal");
  check_error("x = 12abc\n", 1, 5, "invalid decimal literal");
  check_error("x = 0x\n", 1, 5, "invalid hexadecimal literal");
  check_error("x = 0b102\n", 1, 5, "invalid binary literal");
  check_error("x = 1 \\ 2\n", 1, 7, "unexpected character after line continuation character");
  check_error("x = '\\xZZ'\n", 1, 6, "invalid \\x escape");
  check_error("x = 1 !\n", 1, 7, "invalid character '!'");
}

Test(parser_errors, nul_byte) {
  const char src[] = "x = 1\0 + 2\n";
  parsed *p = parse_n(src, sizeof src - 1);
  cr_assert(!p->ok);
  cr_assert_eq(p->d.errors, 1);
  cr_assert(strstr(p->d.first_message, "invalid character") != NULL);
  cr_assert_eq(p->d.first_error.col, 6);
  done(p);
  const char src2[] = "x = 'a\0b'\n";
  p = parse_n(src2, sizeof src2 - 1);
  cr_assert(!p->ok);
  cr_assert_eq(p->d.first_error.col, 7);
  done(p);
}

Test(parser_errors, syntax) {
  check_error("x = f(a b)\n", 1, 9, "expected ',' or ')', got 'b'");
  check_error("x = (1 + )\n", 1, 10, "expected expression, got ')'");
  check_error("x = \n", 1, 5, "expected expression, got end of line");
  check_error("x = 1 2\n", 1, 7, "invalid syntax");
  check_error("x = a if b\n", 1, 11, "expected 'else'");
  check_error("x.1\n", 1, 2, "invalid syntax: unexpected '.1'");
  check_error("x = a.\n", 1, 7, "expected attribute name");
  check_error("x = [1 2]\n", 1, 8, "expected ',' or ']'");
  check_error("x = a[]\n", 1, 7, "expected expression, got ']'");
  check_error("x = {1: 2 3}\n", 1, 11, "expected ',' or '}'");
  check_error("else:\n    pass\n", 1, 1, "invalid syntax");
  check_error("@deco\nx = 1\n", 2, 1, "expected 'def' or 'class' after decorator");
  check_error("def (a): pass\n", 1, 5, "expected function name");
  check_error("def f(a, 1): pass\n", 1, 10, "expected parameter name");
  check_error("for 1 in x: pass\n", 1, 5, "cannot assign to literal");
  check_error("for x of y: pass\n", 1, 7, "expected 'in'");
  check_error("import\n", 1, 7, "expected module name");
  check_error("from a imp b\n", 1, 8, "expected 'import'");
  check_error("f(x) = 1\n", 1, 1, "cannot assign to function call");
  check_error("1 = x\n", 1, 1, "cannot assign to literal");
  check_error("a + b += 1\n", 1, 1, "illegal expression for augmented assignment");
  check_error("a, b: int = 1\n", 1, 1, "only single target");
  check_error("x = f(1=2)\n", 1, 7, "expression cannot contain assignment");
  check_error("if x: if y: pass\n", 1, 7, "invalid syntax: unexpected 'if'");
}

/* The whole Python 3.11 grammar parses (the elaborator rejects what a
 * kernel cannot use); tl-opt --emit=ast checks the trees against CPython
 * (test/IR/grammar). */
Test(parser, whole_grammar_parses) {
  static const char *const srcs[] = {
      "x = f(*a)\n",
      "x = f(a, **k)\n",
      "x = [*a]\n",
      "def f(*args): pass\n",
      "def f(a, *, b): pass\n",
      "def f(**kw): pass\n",
      "def f(a, /): pass\n",
      "class A:\n    pass\n",
      "@d\nclass A:\n    pass\n",
      "global x\n",
      "nonlocal x\n",
      "x = lambda: 1\n",
      "try:\n    pass\nfinally:\n    pass\n",
      "async def f(): pass\n",
      "x = await y\n",
      "yield x\n",
      "del x\n",
      "assert x\n",
      "raise E\n",
      "for i in x:\n    pass\nelse:\n    pass\n",
      "while x:\n    pass\nelse:\n    pass\n",
      "with a as b, c as d:\n    pass\n",
      "x = [i for i in y]\n",
      "x = f(i for i in y)\n",
      "x = {1, 2}\n",
      "x = ...\n",
      "from . import x\n",
      "from a import *\n",
      "x = f\"a{b!r:>{w}}\"\n",
      "x = rf'a'\n",
      "x = b'a'\n",
      "x = 1j\n",
      "x = 9223372036854775808\n",
      "x = 0xFFFFFFFFFFFFFFFFF\n",
      "x = {}\n",
      "if (n := 1): pass\n",
      "match x:\n    case [1, *r]: pass\n    case _: pass\n",
  };
  for (size_t i = 0; i < sizeof srcs / sizeof *srcs; i++) done(parse_ok(srcs[i]));
}

/* ------------------------------------------------------------ limits */

static char *repeat(const char *pre, const char *unit, int n, const char *mid, const char *unit2, int n2,
                    const char *post) {
  size_t len = strlen(pre) + strlen(unit) * (size_t)n + strlen(mid) + strlen(unit2) * (size_t)n2 + strlen(post) + 1;
  char *s = malloc(len);
  cr_assert_not_null(s);
  char *w = s;
  w = stpcpy(w, pre);
  for (int i = 0; i < n; i++) w = stpcpy(w, unit);
  w = stpcpy(w, mid);
  for (int i = 0; i < n2; i++) w = stpcpy(w, unit2);
  stpcpy(w, post);
  return s;
}

Test(parser_limits, nesting) {
  /* 150 parentheses are fine, 5000 are an error (no stack overflow) */
  char *s = repeat("x = ", "(", 150, "1", ")", 150, "\n");
  parsed *p = parse_ok(s);
  done(p);
  free(s);
  s = repeat("x = ", "(", 5000, "1", ")", 5000, "\n");
  p = parse(s);
  cr_assert(!p->ok);
  cr_assert_str_eq(p->d.first_message, "nesting too deep");
  cr_assert_eq(p->d.errors, 1);
  done(p);
  free(s);
  s = repeat("x = ", "[", 5000, "", "", 0, "\n");
  p = parse(s);
  cr_assert(!p->ok);
  cr_assert_str_eq(p->d.first_message, "nesting too deep");
  done(p);
  free(s);
  s = repeat("x = ", "-", 5000, "1", "", 0, "\n");
  p = parse(s);
  cr_assert_str_eq(p->d.first_message, "nesting too deep");
  done(p);
  free(s);
  s = repeat("x = ", "not ", 5000, "1", "", 0, "\n");
  p = parse(s);
  cr_assert_str_eq(p->d.first_message, "nesting too deep");
  done(p);
  free(s);
  s = repeat("x = 1", " ** 1", 5000, "", "", 0, "\n");
  p = parse(s);
  cr_assert_str_eq(p->d.first_message, "nesting too deep");
  done(p);
  free(s);
  s = repeat("x = 1", " if 1 else 1", 5000, "", "", 0, "\n");
  p = parse(s);
  cr_assert_str_eq(p->d.first_message, "nesting too deep");
  done(p);
  free(s);
  /* long left-associative chains: moderate ones parse, huge ones are rejected */
  s = repeat("x = a", " + a", 500, "", "", 0, "\n");
  p = parse_ok(s);
  done(p);
  free(s);
  s = repeat("x = a", " + a", 100000, "", "", 0, "\n");
  p = parse(s);
  cr_assert_str_eq(p->d.first_message, "nesting too deep");
  done(p);
  free(s);
  s = repeat("x = a", ".b", 100000, "", "", 0, "\n");
  p = parse(s);
  cr_assert_str_eq(p->d.first_message, "nesting too deep");
  done(p);
  free(s);
}

Test(parser_limits, block_nesting) {
  size_t cap = 1u << 20, len = 0;
  char *s = malloc(cap);
  for (int i = 0; i < 300; i++) {
    for (int k = 0; k < i; k++) s[len++] = ' ';
    memcpy(s + len, "if x:\n", 6);
    len += 6;
  }
  for (int k = 0; k < 300; k++) s[len++] = ' ';
  memcpy(s + len, "pass\n", 6);
  parsed *p = parse(s);
  cr_assert(!p->ok);
  cr_assert_str_eq(p->d.first_message, "nesting too deep");
  done(p);
  /* a long elif chain */
  len = 0;
  memcpy(s, "if x:\n  pass\n", 13);
  len = 13;
  for (int i = 0; i < 1000; i++) {
    memcpy(s + len, "elif x:\n  pass\n", 15);
    len += 15;
  }
  s[len] = 0;
  p = parse(s);
  cr_assert(!p->ok);
  cr_assert_str_eq(p->d.first_message, "nesting too deep");
  done(p);
  free(s);
}

Test(parser_limits, large_input_is_fast) {
  const char *unit =
      "def f(a, b=1):\n"
      "    for i, j in T.Parallel(a, b):\n"
      "        C[i, j] = A[i * 4:i * 4 + 4, j] + B[j, ::2] * 2.5 - (i if j else -1)\n"
      "    return f(a, b=b, c=[1, 2, 3], d={'k': \"v\"})\n";
  size_t ul = strlen(unit), n = 4000;
  char *s = malloc(ul * n + 1);
  for (size_t i = 0; i < n; i++) memcpy(s + i * ul, unit, ul);
  s[ul * n] = 0;
  parsed *p = parse_ok(s); /* ~800 KB; runs in well under a second even with sanitizers */
  cr_assert_eq(p->m.body.n, (int)n);
  done(p);
  free(s);
}

/* Mutated inputs (byte flips, truncations, insertions) never crash and
 * always either parse or report exactly one error. */
Test(parser_limits, mutations) {
  const char *seed =
      "import tilelang.language as T\n"
      "\n"
      "@T.prim_func\n"
      "def main(A: T.Tensor((1024, 1024), \"float16\"), B: T.Tensor((1024,), 'float32')):\n"
      "    \"\"\"doc\"\"\"\n"
      "    with T.Kernel(8, 8, threads=128) as (bx, by):\n"
      "        A_s = T.alloc_shared((128, 32), \"float16\")\n"
      "        for ko in T.Pipelined(32, num_stages=3):\n"
      "            T.copy(A[by * 128:by * 128 + 128, ko * 32:ko * 32 + 32], A_s)\n"
      "            if ko < 3 and not bx: x = -2**2 // 0x1f; y = 1.5e-3\n"
      "            elif ko: pass\n"
      "            else:\n"
      "\tpass\n"
      "        B[bx] += {'a': [1, (2,)]}['a'][0] if bx else ~by\n";
  size_t n = strlen(seed);
  char *buf = malloc(n + 16);
  uint32_t rng = 12345;
  const char alphabet[] = "()[]{}:,.;=+-*/%<>!@#'\"\\\n\t 0123456789abcxyz_\x80\xff";
  for (int iter = 0; iter < 4000; iter++) {
    memcpy(buf, seed, n);
    size_t len = n;
    int nmut = 1 + iter % 4;
    for (int m = 0; m < nmut; m++) {
      rng = rng * 1103515245u + 12345u;
      size_t pos = (rng >> 8) % len;
      rng = rng * 1103515245u + 12345u;
      char c = alphabet[(rng >> 8) % (sizeof alphabet - 1)];
      switch ((rng >> 20) % 4) {
      case 0: buf[pos] = c; break;
      case 1: len = pos; break;
      case 2:
        memmove(buf + pos + 1, buf + pos, len - pos);
        buf[pos] = c;
        len++;
        break;
      default:
        memmove(buf + pos, buf + pos + 1, len - pos - 1);
        len--;
        break;
      }
      if (len == 0) break;
    }
    /* exact-size copy so that reading past len is caught by ASan */
    char *exact = malloc(len ? len : 1);
    memcpy(exact, buf, len);
    parsed *p = parse_n(exact, len);
    if (p->ok) cr_assert_eq(p->d.errors, 0);
    else cr_assert_eq(p->d.errors, 1, "iteration %d: %d errors", iter, p->d.errors);
    done(p);
    free(exact);
  }
  free(buf);
}

/* ------------------------------------------------------------ lexer */

Test(lexer, layout_tokens) {
  const char *src = "if a:\n    b = (1,\n  2)\n\n# c\nc\n";
  tl_arena a;
  tl_arena_init(&a);
  tl_intern in;
  tl_intern_init(&in, &a);
  tl_lexer lx;
  tl_lexer_init(&lx, src, strlen(src), "t.py", &a, &in);
  tl_tok_kind want[] = {TL_TOK_KEYWORD, TL_TOK_NAME,   TL_TOK_OP,   TL_TOK_NEWLINE, TL_TOK_INDENT, TL_TOK_NAME,
                        TL_TOK_OP,      TL_TOK_OP,     TL_TOK_INT,  TL_TOK_OP,      TL_TOK_INT,    TL_TOK_OP,
                        TL_TOK_NEWLINE, TL_TOK_DEDENT, TL_TOK_NAME, TL_TOK_NEWLINE, TL_TOK_EOF,    TL_TOK_EOF};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    tl_token t;
    tl_lexer_next(&lx, &t);
    cr_assert_eq(t.kind, want[i], "token %zu: kind %d, want %d", i, t.kind, want[i]);
    if (i == 14) {
      cr_assert_eq(t.loc.line, 6);
      cr_assert_eq(t.loc.col, 1);
    }
  }
  tl_lexer_free(&lx);
  tl_intern_free(&in);
  tl_arena_free(&a);
}

Test(printer, misc) {
  check_print("'a\"b\\n'", "\"a\\\"b\\n\"");
  check_print("1.0", "1.0");
  check_print("1e-10", "1e-10");
  check_print("0.001", "0.001");
  check_print("-9223372036854775808", "-9223372036854775808");
  check_print("(-1).x", "(-1).x");
  check_print("-(-1)", "--1");
  check_print("a[b][c:d]", "a[b][c:d]");
}
