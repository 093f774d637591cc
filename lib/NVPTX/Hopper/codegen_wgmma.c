/* SIMT IR → LLVM IR for Hopper's warpgroup statements (docs/simt-ir.md
 * "wgmma"): T.ptx_wgmma_fence / commit / wait / ss / rs and
 * T.ptx_setmaxnreg.  A separate room next to codegen_hopper.c (the
 * asynchronous pipelines and TMA) so each family keeps one file.
 *
 * Role: codegen.c's gen_eval dispatches these statements
 * (TL_INTRIN_CASES_WGMMA) to cg_gen_wgmma_stmt after checking their arity.
 *
 * Algorithm: the target first (wgmma and setmaxnreg exist only on sm_90a:
 * a located error before anything is built, since LLVM never looks inside
 * inline asm and ptxas would reject it; an intrinsic it cannot select would
 * abort the process, docs/codegen.md "Emission and LLVM's failure modes").  Then:
 *  - wgmma.fence / commit_group: inline asm with a ~{memory} clobber;
 *  - wgmma.wait_group n: inline asm through which C[c_off .. c_off + count)
 *    pass as outputs tied to inputs (docs/hopper.md "Accumulators"), so no
 *    use of the accumulators moves above the wait;
 *  - wgmma.mma_async (ss, rs): one inline asm statement whose outputs are
 *    the accumulator registers tied to their inputs (f32: one `f` register
 *    per element; f16: pairs packed into one b32 `r` register, low half =
 *    lower index), the shared-memory descriptors as i64 (`l`) built in IR
 *    from the operand's shared address — ((addr & 0x3FFFF) >> 4) OR the
 *    constant bits of lib/Support/Hopper/wgmma.h's tl_wgmma_desc — and scale-d as
 *    an i32 turned into a predicate inside the asm block (the form run on
 *    a GPU, docs/codegen.md "Intrinsics and inline PTX"); imm-scale-a =
 *    imm-scale-b = 1, imm-trans-a/b
 *    the operands' MN-major flags (the 8-bit forms have no imm-trans
 *    operands: their operands are K-major);
 *  - setmaxnreg: LLVM 19's llvm.nvvm.setmaxnreg.{inc,dec}.sync.aligned.u32.
 * Every one is warpgroup-collective and carries the `convergent` call-site
 * attribute (docs/codegen.md "Kernels").
 * PTX facts: PTX ISA 8.5 §9.7.15.5 (wgmma.mma_async: m64nNk16 with .f16 /
 * .bf16 inputs, m64nNk32 with .e4m3 / .e5m2 inputs (A and B either, K-major
 * only), N a multiple of 8 up to 256, .f32 or (f16 inputs) .f16
 * accumulators, the descriptor format §9.7.15.5.1; the input types and
 * their K: lib/Support/Hopper/wgmma.h tl_wgmma_type_of), the rest of §9.7.15
 * (wgmma.fence, commit_group, wait_group N with N an immediate), and
 * setmaxnreg (count 24..256, a multiple of 8; sm_90a). */
#include "NVPTX/codegen_internal.h"

#include <stdio.h>
#include <string.h>

#include "Support/Hopper/wgmma.h"

#define WG_MAX_REGS 256  /* accumulator registers one asm statement passes (wait: count up to 256) */
#define WG_TEXT_MAX 8192 /* asm text and constraint buffers */

static const char *op_name(const tl_expr *e) { return tl_intrinsics[e->u.call.op].name; }

/* A constant argument in [lo, hi], a multiple of mult. */
static bool const_in(cg *g, const tl_expr *e, int i, const char *what, int64_t lo, int64_t hi, int64_t mult,
                     int64_t *v) {
  if (!cg_const_arg(g, e, i, what, v)) return false;
  if (*v < lo || *v > hi || *v % mult != 0) {
    char m[40] = "";
    if (mult > 1) snprintf(m, sizeof m, " multiple of %lld", (long long)mult);
    cg_error(g, e->u.call.args[i]->loc, "T.%s: %s must be a constant%s from %lld to %lld, not %lld", op_name(e), what,
             m, (long long)lo, (long long)hi, (long long)*v);
    return false;
  }
  return true;
}

/* ------------------------------------------------------- accumulators */
/* The accumulator buffer C (args[i]) and its offset (args[i+1]): a local
 * float32 buffer, or float16 when f16_ok (T.ptx_wgmma_wait, which only
 * passes registers through: also bfloat16, the rs form's A fragment of a
 * bfloat16 attention), 16-bit values taken in pairs. */
typedef struct accum {
  const tl_buffer *b;
  LLVMValueRef base; /* i64 element offset */
  bool f16;
} accum;

static bool accum_arg(cg *g, const tl_expr *e, int i, bool f16_ok, const char *inputs, accum *c) {
  c->b = cg_buffer_arg(g, e, i, "the accumulators");
  if (!c->b) return false;
  tl_dtype t = c->b->dtype;
  bool f32 = t.code == TL_TYPE_FLOAT && t.bits == 32 && t.lanes == 1;
  bool wait = e->u.call.op == TL_INTRIN_PTX_WGMMA_WAIT;
  c->f16 = (wait ? is_narrow_float(t) : is_f16(t)) && t.lanes == 1;
  tl_loc loc = e->u.call.args[i]->loc;
  if (!is_local_scope(c->b->scope)) {
    cg_error(g, loc, "T.%s: the accumulators '%s' must be a local buffer (it is %s)", op_name(e), c->b->name,
             tl_scope_name(c->b->scope));
    return false;
  }
  if (!f32 && !(c->f16 && f16_ok)) {
    cg_error(g, loc, "T.%s: the accumulators '%s' must be float32%s%s%s%s (it is %s)", op_name(e), c->b->name,
             f16_ok ? (wait ? ", float16 or bfloat16" : " or float16") : "", inputs ? " with " : "",
             inputs ? inputs : "", inputs ? " inputs" : "", tl_dtype_name(t));
    return false;
  }
  return (c->base = cg_gen_index64(g, e->u.call.args[i + 1], 0)) != NULL;
}

/* Register r of the accumulators as the asm operand: f32 element r, or the
 * f16 pair (2r, 2r+1) as an i32 (low half = element 2r). */
static LLVMValueRef accum_load(cg *g, const accum *c, int r) {
  buf_info *bi = cg_get_buf(g, c->b, c->b->loc);
  if (!bi) return NULL;
  if (!c->f16) {
    LLVMValueRef p = cg_local_addr(g, c->b, c->base, r);
    if (!p) return NULL;
    LLVMValueRef x = LLVMBuildLoad2(g->B, bi->elem, p, "");
    LLVMSetAlignment(x, 4);
    return x;
  }
  LLVMTypeRef v2 = LLVMVectorType(bi->elem, 2);
  LLVMValueRef v = LLVMGetPoison(v2);
  for (int h = 0; h < 2; h++) {
    LLVMValueRef p = cg_local_addr(g, c->b, c->base, 2 * r + h);
    if (!p) return NULL;
    LLVMValueRef x = LLVMBuildLoad2(g->B, bi->elem, p, "");
    LLVMSetAlignment(x, 2);
    v = LLVMBuildInsertElement(g->B, v, x, LLVMConstInt(g->t_i32, (unsigned)h, 0), "");
  }
  return LLVMBuildBitCast(g->B, v, g->t_i32, "");
}

static bool accum_store(cg *g, const accum *c, int r, LLVMValueRef d) {
  buf_info *bi = cg_get_buf(g, c->b, c->b->loc);
  if (!bi) return false;
  bi->stored = true;
  if (!c->f16) {
    LLVMValueRef p = cg_local_addr(g, c->b, c->base, r);
    if (!p) return false;
    LLVMSetAlignment(LLVMBuildStore(g->B, d, p), 4);
    return true;
  }
  LLVMValueRef v = LLVMBuildBitCast(g->B, d, LLVMVectorType(bi->elem, 2), "");
  for (int h = 0; h < 2; h++) {
    LLVMValueRef p = cg_local_addr(g, c->b, c->base, 2 * r + h);
    if (!p) return false;
    LLVMValueRef x = LLVMBuildExtractElement(g->B, v, LLVMConstInt(g->t_i32, (unsigned)h, 0), "");
    LLVMSetAlignment(LLVMBuildStore(g->B, x, p), 2);
  }
  return true;
}

/* Appends to buf (size WG_TEXT_MAX) at *len; false when it does not fit. */
static bool put(char *buf, size_t *len, const char *fmt, int a) {
  int k = snprintf(buf + *len, WG_TEXT_MAX - *len, fmt, a);
  if (k < 0 || (size_t)k >= WG_TEXT_MAX - *len) return false;
  *len += (size_t)k;
  return true;
}

/* The asm statement `pre{$0, ..., $m-1}post` (`prepost` when m is 0)
 * whose m outputs are the accumulator registers, tied to inputs (operands
 * m..2m-1), followed by the extra inputs (operands 2m.., constraints
 * extra_cons, each followed by a comma); stores the results back. */
static bool accum_asm(cg *g, const accum *c, int m, const char *pre, const char *post, LLVMValueRef *extra, int nextra,
                      const char *extra_cons) {
  char t[WG_TEXT_MAX], k[WG_TEXT_MAX];
  size_t tl = 0, kl = 0;
  LLVMValueRef args[WG_MAX_REGS + 8];
  LLVMTypeRef rt[WG_MAX_REGS];
  if (m > WG_MAX_REGS || nextra > 8) {
    cg_error(g, TL_LOC_NONE, "internal error: wgmma asm with %d registers", m);
    return false;
  }
  bool ok = strlen(pre) < sizeof t;
  tl = (size_t)snprintf(t, sizeof t, "%s", pre);
  for (int r = 0; ok && r < m; r++) {
    ok = put(t, &tl, r ? ", $%d" : "{$%d", r) && put(k, &kl, r ? ",=%c" : "=%c", c->f16 ? 'r' : 'f');
    if (!(args[r] = accum_load(g, c, r))) return false;
    rt[r] = LLVMTypeOf(args[r]);
  }
  if (m) ok = ok && put(t, &tl, "}", 0);
  for (int r = 0; ok && r < m; r++) ok = put(k, &kl, ",%d", r);
  ok = ok && strlen(post) + tl < sizeof t && strlen(extra_cons) + kl + 12 < sizeof k;
  if (!ok) {
    cg_error(g, TL_LOC_NONE, "internal error: wgmma asm text too long");
    return false;
  }
  memcpy(t + tl, post, strlen(post) + 1);
  snprintf(k + kl, sizeof k - kl, "%s%s~{memory}", kl ? "," : "", extra_cons);
  for (int i = 0; i < nextra; i++) args[m + i] = extra[i];
  LLVMTypeRef ret = m == 0 ? g->t_void : m == 1 ? rt[0] : LLVMStructTypeInContext(g->C, rt, (unsigned)m, 0);
  LLVMValueRef call = cg_call_asm(g, ret, t, k, args, (unsigned)(m + nextra));
  if (!call) return false;
  cg_set_convergent(g, call);
  for (int r = 0; r < m; r++)
    if (!accum_store(g, c, r, m == 1 ? call : LLVMBuildExtractValue(g->B, call, (unsigned)r, ""))) return false;
  return true;
}

/* ------------------------------------------------------- shared operands */
/* The descriptor of the shared operand args[i] (a shared buffer of a wgmma
 * input type: float16, bfloat16, float8_e4m3, float8_e5m2), args[i+1] (element offset) with the constants swizzle
 * span, LBO, SBO and MN-major flag at args[i+2 .. i+5]: ((addr & 0x3FFFF)
 * >> 4) | tl_wgmma_desc(0, span, lbo, sbo), as i64.  *dt: the buffer's
 * dtype; *mn: the flag. */
static LLVMValueRef smem_desc(cg *g, const tl_expr *e, int i, const char *what, tl_dtype *dt, int64_t *mn) {
  const tl_buffer *b = cg_buffer_arg(g, e, i, what);
  if (!b) return NULL;
  tl_wgmma_type wt = tl_wgmma_type_of(b->dtype);
  if (!is_shared_scope(b->scope) || !wt.name) {
    cg_error(g, e->u.call.args[i]->loc,
             "T.%s: %s '%s' must be a shared float16, bfloat16, float8_e4m3 or float8_e5m2 buffer (it is %s %s)",
             op_name(e), what, b->name, tl_scope_name(b->scope), tl_dtype_name(b->dtype));
    return NULL;
  }
  *dt = b->dtype;
  int64_t sw, lbo, sbo, off;
  char w[4][40];
  static const char *const names[4] = {"swizzle span", "LBO", "SBO", "MN-major flag"};
  for (int k = 0; k < 4; k++) snprintf(w[k], sizeof w[k], "%s's %s", what, names[k]);
  if (!cg_const_arg(g, e, i + 2, w[0], &sw)) return NULL;
  if (!tl_swizzle_span_ok(sw)) {
    cg_error(g, e->u.call.args[i + 2]->loc, "T.%s: %s must be 0, 32, 64 or 128 (bytes), not %lld", op_name(e), w[0],
             (long long)sw);
    return NULL;
  }
  if (!const_in(g, e, i + 3, w[1], 0, (1 << 18) - 16, 16, &lbo) ||
      !const_in(g, e, i + 4, w[2], 0, (1 << 18) - 16, 16, &sbo) || !const_in(g, e, i + 5, w[3], 0, 1, 1, mn))
    return NULL;
  if (*mn && wt.kmajor_only) {
    cg_error(g, e->u.call.args[i + 5]->loc, "T.%s: %s is %s, which wgmma reads only K-major (MN-major flag 0)",
             op_name(e), what, tl_dtype_name(b->dtype));
    return NULL;
  }
  const tl_expr *oe = e->u.call.args[i + 1];
  if (tl_expr_is_const_int(oe, &off) && off % (16 / wt.bytes) != 0) {
    cg_error(g, oe->loc, "T.%s: %s's element offset %lld is not 16-byte aligned (a multiple of %d elements)",
             op_name(e), what, (long long)off, 16 / wt.bytes);
    return NULL;
  }
  LLVMValueRef p = cg_elem_addr(g, b, oe, e->loc);
  if (!p) return NULL;
  LLVMValueRef a = LLVMBuildPtrToInt(g->B, p, g->t_i64, "");
  a = LLVMBuildLShr(g->B, LLVMBuildAnd(g->B, a, LLVMConstInt(g->t_i64, 0x3FFFF, 0), ""), LLVMConstInt(g->t_i64, 4, 0),
                    "");
  return LLVMBuildOr(g->B, a, LLVMConstInt(g->t_i64, tl_wgmma_desc(0, (int)sw, lbo, sbo), 0), "desc");
}

/* n (args[ni]) and scale_d (args[ni + 1]) of ss / rs; *dname "f32"/"f16". */
static bool n_and_scale(cg *g, const tl_expr *e, int ni, int64_t *n, LLVMValueRef *scale) {
  if (!const_in(g, e, ni, "n", 8, 256, 8, n)) return false;
  const tl_expr *sd = e->u.call.args[ni + 1];
  if (!tl_dtype_is_int(sd->dtype) && !is_bool(sd->dtype)) {
    cg_error(g, sd->loc, "T.%s: scale_d must be an integer (0: D = A*B, else D = A*B + D), not %s", op_name(e),
             tl_dtype_name(sd->dtype));
    return false;
  }
  return (*scale = cg_gen_as(g, sd, TL_INT32)) != NULL;
}

/* One wgmma.mma_async m64n{n}k{K} with inputs of dtypes `at`, `bt` into
 * accumulators c (K and the type names: tl_wgmma_type_of): the asm
 * statement's accumulator registers, then the nextra operands ex
 * (constraints cons) whose last one is scale-d, made a predicate in the block;
 * `post` is the text after the accumulator list (the A and B operands). */
static bool mma_asm(cg *g, const accum *c, int n, tl_dtype at, tl_dtype bt, LLVMValueRef *ex, int nextra,
                    const char *cons, const char *post) {
  int m = c->f16 ? n / 4 : n / 2;
  tl_wgmma_type ta = tl_wgmma_type_of(at), tb = tl_wgmma_type_of(bt);
  char pre[160];
  snprintf(pre, sizeof pre, "{ .reg .pred p; setp.ne.b32 p, $%d, 0; wgmma.mma_async.sync.aligned.m64n%dk%d.%s.%s.%s ",
           2 * m + nextra - 1, n, ta.k, c->f16 ? "f16" : "f32", ta.name, tb.name);
  return accum_asm(g, c, m, pre, post, ex, nextra, cons);
}

/* T.ptx_wgmma_ss(C, c_off, A, a_off, a_sw, a_lbo, a_sbo, a_mn, B, b_off, b_sw, b_lbo, b_sbo, b_mn, n, scale_d) */
static bool gen_wgmma_ss(cg *g, const tl_expr *e) {
  tl_dtype at, bt;
  int64_t amn, bmn, n;
  LLVMValueRef ex[3];
  if (!(ex[0] = smem_desc(g, e, 2, "A", &at, &amn)) || !(ex[1] = smem_desc(g, e, 8, "B", &bt, &bmn)) ||
      !n_and_scale(g, e, 14, &n, &ex[2]))
    return false;
  if (!tl_wgmma_types_match(at, bt)) {
    cg_error(g, e->loc, "T.%s: A and B must have one dtype, or both be 8-bit floats (got %s and %s)", op_name(e),
             tl_dtype_name(at), tl_dtype_name(bt));
    return false;
  }
  accum c;
  if (!accum_arg(g, e, 0, is_f16(at), tl_dtype_name(at), &c)) return false;
  int m = (int)(c.f16 ? n / 4 : n / 2);
  char post[160];
  if (tl_wgmma_type_of(at).kmajor_only) /* 8-bit inputs: the form has no imm-trans-a/b operands */
    snprintf(post, sizeof post, ", $%d, $%d, p, 1, 1; }", 2 * m, 2 * m + 1);
  else snprintf(post, sizeof post, ", $%d, $%d, p, 1, 1, %d, %d; }", 2 * m, 2 * m + 1, (int)amn, (int)bmn);
  return mma_asm(g, &c, (int)n, at, bt, ex, 3, "l,l,r,", post);
}

/* T.ptx_wgmma_rs(C, c_off, A, a_off, B, b_off, b_sw, b_lbo, b_sbo, b_mn, n, scale_d) */
static bool gen_wgmma_rs(cg *g, const tl_expr *e) {
  tl_dtype bt;
  int64_t bmn, n;
  LLVMValueRef ex[6];
  if (!(ex[4] = smem_desc(g, e, 4, "B", &bt, &bmn)) || !n_and_scale(g, e, 10, &n, &ex[5])) return false;
  if (tl_wgmma_type_of(bt).bytes != 2) { /* an 8-bit A packs 4 k values a register: not lowered */
    cg_error(g, e->loc, "T.%s: the register-A form takes float16 or bfloat16 operands, not %s", op_name(e),
             tl_dtype_name(bt));
    return false;
  }
  const tl_buffer *a = cg_buffer_arg(g, e, 2, "A");
  if (!a) return false;
  if (!is_local_scope(a->scope) || !tl_dtype_eq(a->dtype, bt)) {
    cg_error(g, e->u.call.args[2]->loc, "T.%s: A '%s' must be a local %s buffer like B (it is %s %s)", op_name(e),
             a->name, tl_dtype_name(bt), tl_scope_name(a->scope), tl_dtype_name(a->dtype));
    return false;
  }
  accum ra = {a, cg_gen_index64(g, e->u.call.args[3], 0), true}; /* 16-bit pairs packed as b32 */
  if (!ra.base) return false;
  for (int r = 0; r < 4; r++)
    if (!(ex[r] = accum_load(g, &ra, r))) return false;
  accum c;
  if (!accum_arg(g, e, 0, is_f16(bt), tl_dtype_name(bt), &c)) return false;
  int m = (int)(c.f16 ? n / 4 : n / 2);
  char post[160];
  snprintf(post, sizeof post, ", {$%d, $%d, $%d, $%d}, $%d, p, 1, 1, %d; }", 2 * m, 2 * m + 1, 2 * m + 2, 2 * m + 3,
           2 * m + 4, (int)bmn);
  return mma_asm(g, &c, (int)n, bt, bt, ex, 6, "r,r,r,r,l,r,", post);
}

/* T.ptx_wgmma_wait(n, C, c_off, count): wait_group n with C[c_off .. c_off + count) passed through. */
static bool gen_wgmma_wait(cg *g, const tl_expr *e) {
  int64_t n, count;
  if (!const_in(g, e, 0, "n", 0, 7, 1, &n)) return false;
  accum c;
  if (!accum_arg(g, e, 1, true, NULL, &c) || !const_in(g, e, 3, "count", 0, WG_MAX_REGS, c.f16 ? 2 : 1, &count))
    return false;
  char pre[64];
  snprintf(pre, sizeof pre, "wgmma.wait_group.sync.aligned %d; // accumulators: ", (int)n);
  int m = (int)(c.f16 ? count / 2 : count);
  if (m == 0) snprintf(pre, sizeof pre, "wgmma.wait_group.sync.aligned %d;", (int)n);
  return accum_asm(g, &c, m, pre, "", NULL, 0, "");
}

/* Marks the kernel `.minnctapersm 1` once (the "minctasm" annotation LLVM
 * 19 reads and the "nvvm.minctasm" attribute LLVM 22 reads, docs/codegen.md "Kernels"):
 * without a register count fixed at entry, which ptxas derives from
 * .maxntid with .minnctapersm, ptxas ignores setmaxnreg ("C7508: 'setmaxnreg'
 * ignored; unable to determine register count at entry"; with it, ptxas
 * 13.0 reported the 232 registers of the inc, as in a probe on the GPU). */
static void mark_min_ctas(cg *g) {
  static const char key[] = "nvvm.minctasm";
  if (LLVMGetStringAttributeAtIndex(g->fn, LLVMAttributeFunctionIndex, key, sizeof key - 1)) return;
  LLVMAddAttributeAtIndex(g->fn, LLVMAttributeFunctionIndex,
                          LLVMCreateStringAttribute(g->C, key, sizeof key - 1, "1", 1));
  LLVMMetadataRef ops[3] = {LLVMValueAsMetadata(g->fn), LLVMMDStringInContext2(g->C, "minctasm", 8),
                            LLVMValueAsMetadata(LLVMConstInt(g->t_i32, 1, 0))};
  LLVMAddNamedMetadataOperand(g->M, "nvvm.annotations", LLVMMetadataAsValue(g->C, LLVMMDNodeInContext2(g->C, ops, 3)));
}

/* T.ptx_setmaxnreg(count, inc) */
static bool gen_setmaxnreg(cg *g, const tl_expr *e) {
  int64_t count, inc;
  if (!const_in(g, e, 0, "count", 24, 256, 8, &count) || !const_in(g, e, 1, "inc", 0, 1, 1, &inc)) return false;
  mark_min_ctas(g);
  LLVMValueRef a = LLVMConstInt(g->t_i32, (uint64_t)count, 0);
  LLVMValueRef call = cg_call_intrinsic(g, inc ? NV_SETMAXNREG_INC : NV_SETMAXNREG_DEC, NULL, 0, &a, 1);
  cg_set_convergent(g, call);
  return call != NULL;
}

bool cg_gen_wgmma_stmt(cg *g, const tl_expr *e) {
  tl_intrin op = (tl_intrin)e->u.call.op;
  bool setmaxnreg = op == TL_INTRIN_PTX_SETMAXNREG;
  if (setmaxnreg ? !g->target->setmaxnreg : !g->target->wgmma) {
    cg_error(g, e->loc, "T.%s needs sm_90a (target %s)", op_name(e), g->target->name);
    return false;
  }
  switch (op) {
  case TL_INTRIN_PTX_WGMMA_FENCE:
  case TL_INTRIN_PTX_WGMMA_COMMIT: {
    LLVMValueRef call =
        cg_call_asm(g, g->t_void,
                    op == TL_INTRIN_PTX_WGMMA_FENCE ? "wgmma.fence.sync.aligned;" : "wgmma.commit_group.sync.aligned;",
                    "~{memory}", NULL, 0);
    cg_set_convergent(g, call);
    return call != NULL;
  }
  case TL_INTRIN_PTX_WGMMA_WAIT: return gen_wgmma_wait(g, e);
  case TL_INTRIN_PTX_WGMMA_SS: return gen_wgmma_ss(g, e);
  case TL_INTRIN_PTX_WGMMA_RS: return gen_wgmma_rs(g, e);
  case TL_INTRIN_PTX_SETMAXNREG: return gen_setmaxnreg(g, e);
  default: break;
  }
  cg_error(g, e->loc, "internal error: T.%s is not a warpgroup statement", op_name(e));
  return false;
}
