/* SIMT IR → LLVM IR, the Hopper room: named barriers, mbarriers, 1-D bulk
 * copies and the async-proxy fence (docs/simt-ir.md "Asynchronous
 * pipelines"), TMA tensor copies (docs/simt-ir.md "TMA tensor copies";
 * wgmma will join them here).
 *
 * Role: codegen.c's gen_eval dispatches these statements by tl_intrin to
 * cg_gen_hopper_stmt (after checking their arity against the intrinsic
 * table); wgmma and TMA join them here.
 *
 * Algorithm: one row per intrinsic, indexed by tl_intrin (the least SM and
 * PTX ISA version it needs, its generator, its asm text).  The target is checked
 * before anything is built, since LLVM never looks inside inline asm (ptxas
 * would reject it, docs/codegen.md "Intrinsics and inline PTX") and an intrinsic it cannot encode aborts the
 * process (docs/codegen.md "Emission and LLVM's failure modes").  Then the arguments are checked and the code
 * built:
 *  - LLVM 19 intrinsics where they exist: llvm.nvvm.barrier(id, n) →
 *    `bar.sync id, n` (the same instruction as barrier.sync.aligned),
 *    llvm.nvvm.mbarrier.init.shared → `mbarrier.init.shared.b64`,
 *    llvm.nvvm.mbarrier.arrive.shared → `mbarrier.arrive.shared.b64` (its
 *    state result unused; this form also assembles at PTX 7.0, where the `_`
 *    sink does not), llvm.nvvm.cp.async.mbarrier.arrive.noinc.shared →
 *    `cp.async.mbarrier.arrive.noinc.shared.b64` (sm_80, PTX 7.0: the
 *    arrival of the thread's earlier cp.async copies; .shared is
 *    .shared::cta), llvm.nvvm.cp.async.bulk.commit.group / .wait.group;
 *  - inline asm (LLVMGetInlineAsm, side effects, a ~{memory} clobber) for
 *    the rest, with the strings ptxas accepted and a GPU ran
 *    (docs/codegen.md "Intrinsics and inline PTX") or, for mbarrier.expect_tx / complete_tx, the
 *    bulk store and barrier.arrive, that ptxas 13.0 accepted for sm_90a;
 *  - shared addresses (mbarriers, bulk copy ends) are the `ptr addrspace(3)`
 *    element addresses codegen forms for T.ptx_cp_async, passed to the asm
 *    under the 64-bit `l` constraint: LLVM 19's shared pointers are 64-bit
 *    shared-window addresses (no -nvptx-short-ptr, a process-wide option),
 *    which is what the `.shared::cta` / `.shared::cluster` operands take, so
 *    no conversion is emitted (`r` would need a ptrtoint + trunc; a generic
 *    address would be wrong there).  Global addresses are `ptr addrspace(1)`,
 *    also `l`; byte counts and parities are i32 under `r`;
 *  - T.ptx_mbarrier_wait is a loop in IR on the i32 result of one
 *    try_wait.parity (sm_90) or test_wait.parity (sm_86/89) asm block, as
 *    docs/codegen.md "Intrinsics and inline PTX" advises (no labels inside asm);
 *  - a named barrier's id and thread count are warp-uniform integers: constant
 *    ones are range-checked and go to barrier.arrive as immediates (`n`),
 *    others as registers (`r`); warp-collective operations (bar.sync,
 *    barrier.arrive.aligned) carry the `convergent` call-site attribute
 *    (docs/codegen.md "Kernels").
 * PTX facts: PTX ISA 8.5 §9.7.13.1 (bar/barrier: id 0..15, the thread count
 * a multiple of the warp size), §9.7.13.15 (mbarrier: init count 1..2^20-1,
 * tx-count range ±(2^20-1), expect_tx / complete_tx / arrive.expect_tx and
 * try_wait.parity need sm_90 and PTX 8.0, test_wait.parity PTX 7.1),
 * §9.7.9.25.4 (cp.async.bulk: size a multiple of 16, 16-byte aligned
 * addresses; commit_group / wait_group), §9.7.13.4 (membar / fence:
 * fence.proxy.async, sm_90). */
#include "NVPTX/codegen_internal.h"

#include <stdio.h>
#include <string.h>

#define TX_MAX ((1 << 20) - 1) /* mbarrier pending count / tx-count limit (§9.7.13.15.1) */

typedef struct async_op async_op;
typedef bool (*async_gen)(cg *g, const tl_expr *e, const async_op *op);
struct async_op {
  int sm;  /* least SM (0: every target) */
  int ptx; /* least PTX ISA version x10 (0: any) */
  async_gen gen;
  const char *text; /* inline asm of the simple forms, or NULL */
};

/* ------------------------------------------------------------- helpers */
static const char *op_name(const tl_expr *e) { return tl_intrinsics[e->u.call.op].name; }

static LLVMValueRef call_nv(cg *g, int which, LLVMValueRef *args, unsigned n) {
  return cg_call_intrinsic(g, which, NULL, 0, args, n);
}

/* The address of element args[i+1] of the buffer args[i], which must be a
 * shared buffer (shared = true) or a global tensor. */
static LLVMValueRef buf_addr(cg *g, const tl_expr *e, int i, const char *what, bool shared) {
  const tl_buffer *b = cg_buffer_arg(g, e, i, what);
  if (!b) return NULL;
  if (shared ? !is_shared_scope(b->scope) : b->scope != TL_SCOPE_GLOBAL) {
    cg_error(g, e->u.call.args[i]->loc, "T.%s: %s '%s' must be %s (it is %s)", op_name(e), what, b->name,
             shared ? "a shared buffer" : "a global tensor", tl_scope_name(b->scope));
    return NULL;
  }
  return cg_elem_addr(g, b, e->u.call.args[i + 1], e->loc);
}

/* The mbarrier at args[i], args[i+1]: one element of a shared uint64 buffer. */
static LLVMValueRef mbar_addr(cg *g, const tl_expr *e, int i) {
  const tl_buffer *b = cg_buffer_arg(g, e, i, "mbarrier");
  if (!b) return NULL;
  tl_dtype t = b->dtype;
  if (!is_shared_scope(b->scope) || t.code != TL_TYPE_UINT || t.bits != 64 || t.lanes != 1) {
    cg_error(g, e->u.call.args[i]->loc, "T.%s: the mbarrier '%s' must be a shared uint64 buffer (it is %s %s)",
             op_name(e), b->name, tl_scope_name(b->scope), tl_dtype_name(t));
    return NULL;
  }
  return cg_elem_addr(g, b, e->u.call.args[i + 1], e->loc);
}

/* Argument i, a scalar integer, as i32; a constant must lie in [lo, hi] and
 * be a multiple of `mult`. */
static LLVMValueRef int_arg(cg *g, const tl_expr *e, int i, const char *what, int64_t lo, int64_t hi, int64_t mult) {
  const tl_expr *a = e->u.call.args[i];
  if (!tl_dtype_is_int(a->dtype) || a->dtype.lanes != 1) {
    cg_error(g, a->loc, "T.%s: %s must be a scalar integer, not %s", op_name(e), what, tl_dtype_name(a->dtype));
    return NULL;
  }
  int64_t v;
  if (tl_expr_is_const_int(a, &v) && (v < lo || v > hi || v % mult != 0)) {
    char m[40] = "";
    if (mult > 1) snprintf(m, sizeof m, "a multiple of %lld from ", (long long)mult);
    cg_error(g, a->loc, "T.%s: %s must be %s%lld to %lld, not %lld", op_name(e), what, m, (long long)lo, (long long)hi,
             (long long)v);
    return NULL;
  }
  return cg_gen_as(g, a, TL_INT32);
}

/* A constant argument in [lo, hi]. */
static bool const_in(cg *g, const tl_expr *e, int i, const char *what, int64_t lo, int64_t hi, int64_t *v) {
  if (!cg_const_arg(g, e, i, what, v)) return false;
  if (*v < lo || *v > hi) {
    cg_error(g, e->u.call.args[i]->loc, "T.%s: %s must be a constant from %lld to %lld, not %lld", op_name(e), what,
             (long long)lo, (long long)hi, (long long)*v);
    return false;
  }
  return true;
}

/* ------------------------------------------------------------ generators */
/* T.ptx_bar_sync(id, n) / T.ptx_bar_arrive(id, n): named barrier id over n
 * threads; both warp-uniform integers (registers are allowed, §9.7.13.1),
 * checked when constant. */
static bool gen_bar(cg *g, const tl_expr *e, const async_op *op) {
  LLVMValueRef args[2] = {int_arg(g, e, 0, "the barrier id", 0, 15, 1), NULL};
  if (!args[0] || !(args[1] = int_arg(g, e, 1, "the thread count", 32, g->target->max_threads, 32))) return false;
  char cons[24]; /* constants as immediates (`n`), so the PTX reads `barrier.arrive.aligned 3, 64;` */
  snprintf(cons, sizeof cons, "%s,%s,~{memory}", LLVMIsConstant(args[0]) ? "n" : "r",
           LLVMIsConstant(args[1]) ? "n" : "r");
  LLVMValueRef c =
      op->text ? cg_call_asm(g, g->t_void, op->text, cons, args, 2) : call_nv(g, NV_BARRIER_N_SYNC, args, 2);
  cg_set_convergent(g, c);
  return c != NULL;
}

/* T.ptx_mbarrier_init(bar, off, count) */
static bool gen_mbar_init(cg *g, const tl_expr *e, const async_op *op) {
  (void)op;
  LLVMValueRef args[2] = {mbar_addr(g, e, 0), NULL};
  if (!args[0] || !(args[1] = int_arg(g, e, 2, "the arrival count", 1, TX_MAX, 1))) return false;
  return call_nv(g, NV_MBARRIER_INIT, args, 2) != NULL;
}

/* T.ptx_mbarrier_arrive(bar, off), T.ptx_cp_async_mbarrier_arrive_noinc(bar, off) */
static bool gen_mbar_arrive(cg *g, const tl_expr *e, const async_op *op) {
  (void)op;
  LLVMValueRef a = mbar_addr(g, e, 0);
  int which = e->u.call.op == TL_INTRIN_PTX_CP_ASYNC_MBARRIER_ARRIVE_NOINC ? NV_CP_ASYNC_MBARRIER_ARRIVE_NOINC
                                                                           : NV_MBARRIER_ARRIVE;
  return a && call_nv(g, which, &a, 1) != NULL;
}

/* T.ptx_mbarrier_{arrive_expect_tx,expect_tx,complete_tx}(bar, off, bytes) */
static bool gen_mbar_tx(cg *g, const tl_expr *e, const async_op *op) {
  LLVMValueRef args[2] = {mbar_addr(g, e, 0), NULL};
  if (!args[0] || !(args[1] = int_arg(g, e, 2, "the byte count", 0, TX_MAX, 1))) return false;
  return cg_call_asm(g, g->t_void, op->text, "l,r,~{memory}", args, 2) != NULL;
}

/* T.ptx_mbarrier_wait(bar, off, parity): spin on try_wait / test_wait.parity. */
static bool gen_mbar_wait(cg *g, const tl_expr *e, const async_op *op) {
  (void)op;
  LLVMValueRef args[2] = {mbar_addr(g, e, 0), NULL};
  if (!args[0] || !(args[1] = int_arg(g, e, 2, "the phase parity", INT32_MIN, INT32_MAX, 1))) return false;
  args[1] = LLVMBuildAnd(g->B, args[1], LLVMConstInt(g->t_i32, 1, 0), "parity");
  const char *text =
      g->target->sm >= 90
          ? "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [$1], $2; selp.u32 $0, 1, 0, p; }"
          : "{ .reg .pred p; mbarrier.test_wait.parity.shared.b64 p, [$1], $2; selp.u32 $0, 1, 0, p; }";
  LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(g->C, g->fn, "mbar.wait");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->C, g->fn, "mbar.done");
  LLVMBuildBr(g->B, loop);
  LLVMPositionBuilderAtEnd(g->B, loop);
  LLVMValueRef r = cg_call_asm(g, g->t_i32, text, "=r,l,r,~{memory}", args, 2);
  LLVMBuildCondBr(g->B, LLVMBuildICmp(g->B, LLVMIntNE, r, LLVMConstInt(g->t_i32, 0, 0), ""), done, loop);
  LLVMPositionBuilderAtEnd(g->B, done);
  return true;
}

/* T.ptx_cp_async_bulk(dst, dst_off, src, src_off, bytes, bar, bar_off):
 * global → shared, completing `bytes` of the mbarrier's tx-count. */
static bool gen_bulk_load(cg *g, const tl_expr *e, const async_op *op) {
  LLVMValueRef args[4];
  if (!(args[0] = buf_addr(g, e, 0, "dst", true)) || !(args[1] = buf_addr(g, e, 2, "src", false)) ||
      !(args[2] = int_arg(g, e, 4, "the byte count", 16, TX_MAX / 16 * 16, 16)) || !(args[3] = mbar_addr(g, e, 5)))
    return false;
  return cg_call_asm(g, g->t_void, op->text, "l,l,r,l,~{memory}", args, 4) != NULL;
}

/* T.ptx_cp_async_bulk_store(dst, dst_off, src, src_off, bytes): shared → global, in a bulk group. */
static bool gen_bulk_store(cg *g, const tl_expr *e, const async_op *op) {
  LLVMValueRef args[3];
  if (!(args[0] = buf_addr(g, e, 0, "dst", false)) || !(args[1] = buf_addr(g, e, 2, "src", true)) ||
      !(args[2] = int_arg(g, e, 4, "the byte count", 16, INT32_MAX / 16 * 16, 16)))
    return false;
  buf_info *bi = cg_get_buf(g, e->u.call.args[0]->u.buffer, e->loc);
  if (!bi) return false;
  bi->stored = true; /* the tensor is written: no readonly attribute */
  return cg_call_asm(g, g->t_void, op->text, "l,l,r,~{memory}", args, 3) != NULL;
}

/* T.ptx_bulk_commit_group() / T.ptx_bulk_wait_group(n[, read]):
 * cp.async.bulk.wait_group[.read] n (PTX ISA §9.7.9.25.4.3: .read waits only
 * until the groups' shared-memory sources have been read) */
static bool gen_bulk_group(cg *g, const tl_expr *e, const async_op *op) {
  (void)op;
  if (e->u.call.n == 0) return call_nv(g, NV_BULK_COMMIT_GROUP, NULL, 0) != NULL;
  int64_t n, rd = 0;
  if (!const_in(g, e, 0, "n", 0, 1000, &n)) return false;
  if (e->u.call.n > 1 && !const_in(g, e, 1, "read", 0, 1, &rd)) return false;
  LLVMValueRef a = LLVMConstInt(g->t_i32, (uint64_t)n, 0);
  return call_nv(g, rd ? NV_BULK_WAIT_GROUP_READ : NV_BULK_WAIT_GROUP, &a, 1) != NULL;
}

/* T.ptx_fence_proxy_async() */
static bool gen_plain_asm(cg *g, const tl_expr *e, const async_op *op) {
  (void)e;
  return cg_call_asm(g, g->t_void, op->text, "~{memory}", NULL, 0) != NULL;
}

/* T.ptx_tma_load(dst, dst_off, bar, bar_off, src, swizzle, box.., c..) /
 * T.ptx_tma_store(dst, src, src_off, swizzle, box.., c..): one
 * cp.async.bulk.tensor.{r}d through the map parameter of (tensor, box,
 * swizzle), coordinates innermost first (PTX ISA §9.7.9.27).  The map's
 * address is the generic address of the grid-constant parameter (LLVM
 * takes it with cvta.param), under `l`. */
static bool gen_tma(cg *g, const tl_expr *e, const async_op *op) {
  (void)op;
  tl_tma_call tc;
  tl_loc loc;
  char msg[256];
  if (!tl_tma_decode(g->f, e, &tc, &loc, msg, sizeof msg)) {
    cg_error(g, loc, "%s", msg);
    return false;
  }
  int mi = tl_tma_find(g->tma_maps, g->ntma, &tc.map), r = tc.map.rank;
  if (mi < 0) {
    cg_error(g, e->loc, "internal error: T.%s has no tensor map parameter", op_name(e));
    return false;
  }
  LLVMValueRef args[3 + TL_TMA_MAX_RANK];
  int n = 0;
  if (!tc.is_store && !(args[n++] = cg_elem_addr(g, tc.smem->u.buffer, tc.smem_off, e->loc))) return false;
  args[n++] = g->tma_params[mi];
  for (int i = r - 1; i >= 0; i--)
    if (!(args[n++] = cg_gen_as(g, tc.coord[i], TL_INT32))) return false;
  if (tc.is_store) {
    if (!(args[n++] = cg_elem_addr(g, tc.smem->u.buffer, tc.smem_off, e->loc))) return false;
    buf_info *bi = cg_get_buf(g, tc.map.tensor, e->loc);
    if (!bi) return false;
    bi->stored = true; /* the tensor is written: no readonly attribute */
  } else if (!(args[n++] = mbar_addr(g, e, 2))) {
    return false;
  }
  char text[320], coords[64] = "", cons[80] = "";
  int first = tc.is_store ? 1 : 2; /* the asm operand number of the innermost coordinate */
  for (int i = 0; i < r; i++)
    snprintf(coords + strlen(coords), sizeof coords - strlen(coords), "%s$%d", i ? ", " : "", first + i);
  if (tc.is_store) {
    snprintf(text, sizeof text, "cp.async.bulk.tensor.%dd.global.shared::cta.bulk_group [$0, {%s}], [$%d];", r, coords,
             r + 1);
    snprintf(cons, sizeof cons, "l,");
  } else {
    snprintf(text, sizeof text,
             "cp.async.bulk.tensor.%dd.shared::cluster.global.tile.mbarrier::complete_tx::bytes [$0], [$1, {%s}], "
             "[$%d];",
             r, coords, r + 2);
    snprintf(cons, sizeof cons, "l,l,");
  }
  for (int i = 0; i < r; i++) strcat(cons, "r,");
  strcat(cons, "l,~{memory}");
  return cg_call_asm(g, g->t_void, text, cons, args, (unsigned)n) != NULL;
}

static const async_op async_ops[TL_INTRIN_COUNT] = {
    [TL_INTRIN_PTX_BAR_SYNC] = {0, 0, gen_bar, NULL},
    [TL_INTRIN_PTX_BAR_ARRIVE] = {0, 0, gen_bar, "barrier.arrive.aligned $0, $1;"},
    [TL_INTRIN_PTX_MBARRIER_INIT] = {0, 0, gen_mbar_init, NULL},
    [TL_INTRIN_PTX_MBARRIER_ARRIVE] = {0, 0, gen_mbar_arrive, NULL},
    [TL_INTRIN_PTX_CP_ASYNC_MBARRIER_ARRIVE_NOINC] = {80, 70, gen_mbar_arrive, NULL},
    [TL_INTRIN_PTX_MBARRIER_ARRIVE_EXPECT_TX] = {90, 80, gen_mbar_tx,
                                                 "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;"},
    [TL_INTRIN_PTX_MBARRIER_EXPECT_TX] = {90, 80, gen_mbar_tx,
                                          "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [$0], $1;"},
    [TL_INTRIN_PTX_MBARRIER_COMPLETE_TX] = {90, 80, gen_mbar_tx,
                                            "mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [$0], $1;"},
    [TL_INTRIN_PTX_MBARRIER_WAIT] = {0, 71, gen_mbar_wait, NULL},
    [TL_INTRIN_PTX_CP_ASYNC_BULK] = {90, 80, gen_bulk_load,
                                     "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1], "
                                     "$2, [$3];"},
    [TL_INTRIN_PTX_CP_ASYNC_BULK_STORE] = {90, 80, gen_bulk_store,
                                           "cp.async.bulk.global.shared::cta.bulk_group [$0], [$1], $2;"},
    [TL_INTRIN_PTX_BULK_COMMIT_GROUP] = {90, 80, gen_bulk_group, NULL},
    [TL_INTRIN_PTX_BULK_WAIT_GROUP] = {90, 80, gen_bulk_group, NULL},
    [TL_INTRIN_PTX_FENCE_PROXY_ASYNC] = {90, 80, gen_plain_asm, "fence.proxy.async.shared::cta;"},
    [TL_INTRIN_PTX_FENCE_GPU] = {70, 60, gen_plain_asm, "fence.acq_rel.gpu;"},
    /* TMA tensor copies (their own block, apart from wgmma's) */
    [TL_INTRIN_PTX_TMA_LOAD] = {90, 80, gen_tma, NULL},
    [TL_INTRIN_PTX_TMA_STORE] = {90, 80, gen_tma, NULL},
};

/* One of the statements above (its arity already checked by gen_eval):
 * the target's SM and PTX version first, then the generator. */
bool cg_gen_hopper_stmt(cg *g, const tl_expr *e) {
  const async_op *op = &async_ops[e->u.call.op];
  const tl_target *t = g->target;
  if (!op->gen) {
    cg_error(g, e->loc, "internal error: T.%s is not a Hopper-room statement", op_name(e));
    return false;
  }
  if (t->sm < op->sm) {
    cg_error(g, e->loc, "T.%s needs sm_%d or later (target %s)", op_name(e), op->sm, t->name);
    return false;
  }
  if (t->ptx_version < op->ptx) {
    cg_error(g, e->loc, "T.%s needs PTX ISA %d.%d or later (target %s emits PTX ISA %d.%d)", op_name(e), op->ptx / 10,
             op->ptx % 10, t->name, t->ptx_version / 10, t->ptx_version % 10);
    return false;
  }
  return op->gen(g, e, op);
}
