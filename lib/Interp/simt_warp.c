/* SIMT executor: warp-collective and asynchronous-copy intrinsics
 * (docs/simt-ir.md, "Warp-level and asynchronous intrinsics").
 *
 * Each collective runs once per warp (32 consecutive threads of the block)
 * that has an active thread, and requires all 32 lanes to be active (the
 * .sync.aligned forms, PTX ISA §9.7.14.5.15 ldmatrix and §9.7.14.5.14
 * mma, have undefined behaviour otherwise).
 *  - ldmatrix.m8n8.x{1,2,4}[.trans].b16: lanes 8i..8i+7 give the row
 *    addresses of matrix i (16-byte aligned rows of 8 b16 elements);
 *    register i of lane l receives row l/4, columns 2(l%4), 2(l%4)+1 of
 *    matrix i, or with .trans the elements [2(l%4)][l/4], [2(l%4)+1][l/4]
 *    (PTX ISA §9.7.14.5.15; docs/layouts.md).  Data is copied as raw
 *    16-bit patterns.
 *  - stmatrix.m8n8.x{1,2,4}[.trans].b16 (sm_90): the inverse map; each
 *    16-byte row is a shared store by the lane that gave its address.
 *  - mma.sync.m16n8k16.row.col (f16/bf16 inputs, f32 or f16 accumulators):
 *    the A/B/C fragments are gathered from the 32 lanes by the maps of PTX
 *    ISA §9.7.14.5.8 (docs/layouts.md) and D = A·B + C is computed per element
 *    (simt_mma.c's sx_mma_warps, which runs every mma shape; the operand
 *    checks are here).
 *    APPROXIMATION: each dot product (16 products plus c) is accumulated in
 *    double and rounded once to the accumulator dtype (tl_mma_step, which
 *    the reference evaluator's T.gemm into an f16 accumulator chains over
 *    k-chunks of 16, so the two agree bit for bit).  The tensor cores'
 *    internal precision and rounding are not specified by PTX; for inputs
 *    whose products and partial sums are exact in double (integer-valued
 *    tiles, and in practice random f16/bf16 tiles) this is exactly the
 *    correctly rounded result, and the GPU agrees within an ulp.
 *  - shfl.sync.{bfly,down,up,idx}.b32 with c = ((32 - width) << 8) |
 *    (up ? 0 : 31), as codegen_sync.c emits it, following the pseudocode of
 *    shfl.sync in the PTX ISA (Data Movement and Conversion Instructions):
 *    segment mask, maxLane / minLane, an out-of-range source lane gives
 *    the thread's own value; values wider than 32 bits move as two halves,
 *    which is the same as moving the whole value.
 *  - cp.async (PTX ISA §9.7.9.25): the bytes are copied at issue time and
 *    tagged with (thread, group) where group is the thread's open group;
 *    commit_group closes it; wait_group n completes all but the n most
 *    recent committed groups of the thread and stamps them with its gang's
 *    current clock.  Reading a byte of an incomplete group is an error, and
 *    other threads may read it only after a synchronisation that follows the
 *    wait (simt_race.c's protocol checks).  pred false zero-fills (src-size 0). */
#include "Interp/simt_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

sx_buf *sx_buf_arg(sx *x, const tl_expr *e, int i, sx_space want, int eb, const char *what) {
  const tl_expr *a = e->u.call.args[i];
  const char *name = tl_intrinsics[e->u.call.op].name;
  if (a->kind != TL_EXPR_BUFFER) {
    sx_fail(x, "T.%s: argument %d must be a buffer (%s)", name, i + 1, what);
    return NULL;
  }
  sx_buf *sb = sx_buffer(x, a->u.buffer);
  if (!sb) return NULL;
  if (sb->space != want) {
    sx_fail(x, "T.%s: buffer '%s' must be a %s buffer", name, a->u.buffer->name,
            want == SX_LOCAL    ? "local"
            : want == SX_SHARED ? "shared"
                                : "global");
    return NULL;
  }
  if (eb && sb->eb != eb) {
    sx_fail(x, "T.%s: buffer '%s' must have %d-byte elements, not %s", name, a->u.buffer->name, eb,
            tl_dtype_name(sb->et));
    return NULL;
  }
  return sb;
}

bool sx_const_arg(sx *x, const tl_expr *e, int i, int64_t *v) {
  if (!tl_expr_is_const_int(e->u.call.args[i], v))
    return sx_fail(x, "T.%s: argument %d must be a constant", tl_intrinsics[e->u.call.op].name, i + 1);
  return true;
}

/* Element el of local buffer sb in the gang's thread t (vector index). */
#define local_ptr(sb, t, el) sx_elem_ptr((sb), x->tbase + (t), (el))

bool sx_local_range(sx *x, const sx_buf *sb, int64_t off, int64_t n, int t, const char *what) {
  if (off < 0 || off + n > sb->elems)
    return sx_fail(x, "%s: elements %lld..%lld of local buffer '%s' (size %lld) are out of bounds in thread %d", what,
                   (long long)off, (long long)(off + n - 1), sb->b->name, (long long)sb->elems, x->tbase + t);
  return true;
}

/* ------------------------------------------------- ldmatrix / stmatrix */
/* The operands of T.ptx_ldmatrix(dst, dst_off, src, src_off, num, trans)
 * (store false: registers <- shared) and T.ptx_stmatrix(dst, dst_off, src,
 * src_off, num, trans) (store true: shared <- registers), evaluated for
 * the active (full) warps: the shared buffer and its per-lane row offsets,
 * the local buffer and its per-lane register offsets. */
typedef struct mat_args {
  sx_buf *sh, *reg;
  sx_val shoff, regoff;
  int64_t num, trans;
} mat_args;

static bool matrix_args(sx *x, const tl_expr *e, const uint8_t *mask, bool store, mat_args *a) {
  const char *op = store ? "stmatrix" : "ldmatrix";
  if (e->u.call.n != 6) return sx_fail(x, "T.ptx_%s takes 6 arguments", op);
  int si = store ? 0 : 2, ri = store ? 2 : 0;
  a->sh = sx_buf_arg(x, e, si, SX_SHARED, 2, store ? "the shared destination" : "the shared source");
  a->reg =
      a->sh ? sx_buf_arg(x, e, ri, SX_LOCAL, 2, store ? "the source registers" : "the destination registers") : NULL;
  if (!a->reg || !sx_const_arg(x, e, 4, &a->num) || !sx_const_arg(x, e, 5, &a->trans)) return false;
  if (a->num != 1 && a->num != 2 && a->num != 4)
    return sx_fail(x, "T.ptx_%s: num must be 1, 2 or 4, not %lld", op, (long long)a->num);
  return sx_full_warps(x, mask, op) && sx_eval_as(x, e->u.call.args[si + 1], TL_INT64, mask, &a->shoff) &&
         sx_eval_as(x, e->u.call.args[ri + 1], TL_INT64, mask, &a->regoff);
}

/* Row r of matrix i: lane 8i + r's address, in bounds and 16-byte aligned. */
static bool matrix_row(sx *x, const mat_args *a, int th, const char *op, int64_t *off) {
  *off = a->shoff.v[th].i;
  if (*off < 0 || *off + 8 > a->sh->elems)
    return sx_fail(x, "%s: row address of thread %d (elements %lld..%lld) is outside shared buffer '%s' (size %lld)",
                   op, x->tbase + th, (long long)*off, (long long)(*off + 7), a->sh->b->name, (long long)a->sh->elems);
  if ((a->sh->base + *off * 2) % 16)
    return sx_fail(x, "%s: row address of thread %d (element %lld of '%s') is not 16-byte aligned", op, x->tbase + th,
                   (long long)*off, a->sh->b->name);
  return true;
}

/* The registers of warp w's lanes <-> the a.num 8x8 matrices M, as both
 * instructions map them: register i of lane l holds row l/4, columns 2(l%4)
 * and 2(l%4)+1 of matrix i (low half the lower column), or with .trans the
 * elements [2(l%4)][l/4] and [2(l%4)+1][l/4].  from_regs (stmatrix): M is
 * filled from the registers; else (ldmatrix) the registers from M. */
static bool lane_registers(sx *x, const mat_args *a, int w, uint16_t M[4][8][8], bool from_regs) {
  const char *op = from_regs ? "stmatrix" : "ldmatrix";
  for (int l = 0; l < 32; l++) {
    int th = w + l;
    int64_t d = a->regoff.v[th].i;
    if (!sx_local_range(x, a->reg, d, 2 * a->num, th, op)) return false;
    int g = l >> 2, c = 2 * (l & 3);
    for (int i = 0; i < a->num; i++)
      for (int h = 0; h < 2; h++) {
        uint16_t *m = a->trans ? &M[i][c + h][g] : &M[i][g][c + h];
        uint8_t *r = local_ptr(a->reg, th, d + 2 * i + h);
        if (from_regs) memcpy(m, r, 2);
        else memcpy(r, m, 2);
      }
  }
  return true;
}

static bool do_ldmatrix(sx *x, const tl_expr *e, const uint8_t *mask) {
  mat_args a;
  if (!matrix_args(x, e, mask, false, &a)) return false;
  for (int w = 0; w < x->T; w += 32) {
    if (!mask[w]) continue; /* full warps only: lane 0 stands for the warp */
    uint16_t M[4][8][8];
    for (int i = 0; i < a.num; i++)
      for (int r = 0; r < 8; r++) {
        int th = w + 8 * i + r;
        int64_t off;
        if (!matrix_row(x, &a, th, "ldmatrix", &off) || !sx_smem_read(x, a.sh, off * 2, 16, x->tbase + th))
          return false;
        memcpy(M[i][r], a.sh->data + off * 2, 16);
      }
    if (!lane_registers(x, &a, w, M, false)) return false;
  }
  return true;
}

/* ldmatrix's inverse (PTX ISA §9.7.14.5.16): register i of lane l holds
 * row l/4, columns 2(l%4), 2(l%4)+1 of matrix i (with .trans the elements
 * [2(l%4)][l/4], [2(l%4)+1][l/4]); lanes 8i..8i+7 give the row addresses of
 * matrix i, and each 16-byte row is written by the lane that addressed it. */
static bool do_stmatrix(sx *x, const tl_expr *e, const uint8_t *mask) {
  mat_args a;
  if (!matrix_args(x, e, mask, true, &a)) return false;
  for (int w = 0; w < x->T; w += 32) {
    if (!mask[w]) continue;
    uint16_t M[4][8][8];
    if (!lane_registers(x, &a, w, M, true)) return false;
    for (int i = 0; i < a.num; i++)
      for (int r = 0; r < 8; r++) {
        int th = w + 8 * i + r;
        int64_t off;
        if (!matrix_row(x, &a, th, "stmatrix", &off) || !sx_smem_write(x, a.sh, off * 2, 16, x->tbase + th, -1))
          return false;
        memcpy(a.sh->data + off * 2, M[i][r], 16);
      }
  }
  return true;
}

/* ----------------------------------------------------------------- mma */
bool sx_mma_offsets(sx *x, const tl_expr *e, const uint8_t *mask, sx_val *ao, sx_val *bo, sx_val *co) {
  return sx_eval_as(x, e->u.call.args[1], TL_INT64, mask, ao) && sx_eval_as(x, e->u.call.args[3], TL_INT64, mask, bo) &&
         sx_eval_as(x, e->u.call.args[5], TL_INT64, mask, co);
}

static bool do_mma(sx *x, const tl_expr *e, const uint8_t *mask) {
  if (e->u.call.n != 7) return sx_fail(x, "T.ptx_mma takes 7 arguments");
  const tl_expr *shape = e->u.call.args[6];
  if (shape->kind == TL_EXPR_STRING && strcmp(shape->u.str, "m16n8k16"))
    return sx_mma_types(x, e, mask); /* simt_mma.c */
  if (shape->kind != TL_EXPR_STRING || strcmp(shape->u.str, "m16n8k16"))
    return sx_fail(x, "T.ptx_mma: shape %s is not supported by the SIMT executor (m16n8k16 is)",
                   shape->kind == TL_EXPR_STRING ? shape->u.str : "(not a string)");
  sx_buf *a = sx_buf_arg(x, e, 0, SX_LOCAL, 2, "the A fragment");
  sx_buf *b = a ? sx_buf_arg(x, e, 2, SX_LOCAL, 2, "the B fragment") : NULL;
  sx_buf *c = b ? sx_buf_arg(x, e, 4, SX_LOCAL, 0, "the accumulators") : NULL;
  if (!c) return false;
  bool f16in = a->et.code == TL_TYPE_FLOAT && a->et.bits == 16;
  bool bf16in = a->et.code == TL_TYPE_BFLOAT && a->et.bits == 16;
  if ((!f16in && !bf16in) || !tl_dtype_eq(a->et, b->et))
    return sx_fail(x, "T.ptx_mma: A and B must both be float16 or both bfloat16 (got %s and %s)", tl_dtype_name(a->et),
                   tl_dtype_name(b->et));
  bool c32 = c->et.code == TL_TYPE_FLOAT && c->et.bits == 32;
  bool c16 = c->et.code == TL_TYPE_FLOAT && c->et.bits == 16;
  if (!c32 && !(c16 && f16in))
    return sx_fail(x, "T.ptx_mma: accumulator dtype %s is not supported with %s inputs", tl_dtype_name(c->et),
                   tl_dtype_name(a->et));
  tl_mma_info mi = tl_mma_info_of(a->et, c->et);
  if (mi.kind != TL_MMA_KIND_F16)
    return sx_fail(x, "T.ptx_mma: A %s and C %s are not an mma.sync form", tl_dtype_name(a->et), tl_dtype_name(c->et));
  return sx_mma_warps(x, e, mask, a, b, c, &mi); /* simt_mma.c */
}

/* ------------------------------------------------------------ cp.async */
static bool do_cp_async(sx *x, const tl_expr *e, const uint8_t *mask) {
  if (e->u.call.n != 6) return sx_fail(x, "T.ptx_cp_async takes 6 arguments");
  sx_buf *dst = sx_buf_arg(x, e, 0, SX_SHARED, 0, "the shared destination");
  sx_buf *src = dst ? sx_buf_arg(x, e, 2, SX_GLOBAL, 0, "the global source") : NULL;
  int64_t bytes;
  if (!src || !sx_const_arg(x, e, 4, &bytes)) return false;
  if (bytes != 4 && bytes != 8 && bytes != 16)
    return sx_fail(x, "T.ptx_cp_async copies 4, 8 or 16 bytes, not %lld", (long long)bytes);
  sx_val doff, soff, pred;
  if (!sx_eval_as(x, e->u.call.args[1], TL_INT64, mask, &doff) ||
      !sx_eval_as(x, e->u.call.args[3], TL_INT64, mask, &soff) ||
      !sx_eval_as(x, e->u.call.args[5], TL_BOOL, mask, &pred))
    return false;
  /* An element offset is bounded by the buffer's size before it is scaled to
     bytes: an index expression can take any int64 value (k * -2^63). */
  for (int t = 0; t < x->T; t++) {
    if (!mask[t]) continue;
    int64_t d = doff.v[t].i;
    if (d < 0 || d > dst->elems || d * dst->eb + bytes > dst->elems * dst->eb)
      return sx_fail(x,
                     "out-of-bounds cp.async into shared buffer '%s': %lld bytes at element %lld of %lld "
                     "in thread %d",
                     dst->b->name, (long long)bytes, (long long)d, (long long)dst->elems, x->tbase + t);
    int64_t db = d * dst->eb;
    if ((dst->base + db) % bytes)
      return sx_fail(x, "misaligned %lld-byte cp.async into shared buffer '%s' at element %lld in thread %d",
                     (long long)bytes, dst->b->name, (long long)d, x->tbase + t);
    bool p = pred.v[t].i != 0;
    int64_t s = soff.v[t].i, sbyte = 0;
    if (p) {
      if (s < 0 || s > src->elems || s * src->eb + bytes > src->elems * src->eb)
        return sx_fail(x,
                       "out-of-bounds cp.async from global buffer '%s': %lld bytes at element %lld of %lld "
                       "in thread %d",
                       src->b->name, (long long)bytes, (long long)s, (long long)src->elems, x->tbase + t);
      sbyte = s * src->eb;
      if ((src->base + sbyte) % bytes) /* base: a view's byte offset in its tensor (simt_view.c) */
        return sx_fail(x, "misaligned %lld-byte cp.async from global buffer '%s' at element %lld in thread %d",
                       (long long)bytes, src->b->name, (long long)s, x->tbase + t);
    }
    if (!sx_smem_write(x, dst, db, (int)bytes, x->tbase + t, x->k->async[x->tbase + t].committed)) return false;
    if (p) memcpy(dst->data + db, src->data + sbyte, (size_t)bytes);
    else memset(dst->data + db, 0, (size_t)bytes);
  }
  return true;
}

static bool do_commit(sx *x, const uint8_t *mask) {
  for (int t = 0; t < x->T; t++)
    if (mask[t]) x->k->async[x->tbase + t].committed++;
  return true;
}

/* Thread t's cp.async groups before `upto` complete now (at the clock of
 * the gang that runs this statement): T.ptx_wait_group's and, through the
 * mbarrier's arrival, T.ptx_cp_async_mbarrier_arrive_noinc's. */
bool sx_cp_async_complete(sx *x, int t, int64_t upto) {
  sx_async *as = &x->k->async[t];
  if (upto <= as->completed) return true;
  if (upto > as->cap) {
    int32_t cap = as->cap ? as->cap : 8;
    while (cap < upto) cap *= 2;
    uint32_t *p = realloc(as->done_clk, sizeof *p * (size_t)cap);
    if (!p) return sx_fail(x, "out of memory in the SIMT executor");
    as->done_clk = p;
    uint32_t *q = realloc(as->done_fence, sizeof *q * (size_t)cap);
    if (!q) return sx_fail(x, "out of memory in the SIMT executor");
    as->done_fence = q;
    as->cap = cap;
  }
  for (int64_t g = as->completed; g < upto; g++) {
    as->done_clk[g] = sx_vc(x->k, x->g)[x->g];
    as->done_fence[g] = as->fences;
  }
  as->completed = (int32_t)upto;
  return true;
}

static bool do_wait(sx *x, const tl_expr *e, const uint8_t *mask) {
  int64_t n;
  if (e->u.call.n != 1 || !sx_const_arg(x, e, 0, &n)) return false;
  if (n < 0) return sx_fail(x, "T.ptx_wait_group(%lld): the count must be >= 0", (long long)n);
  for (int t = 0; t < x->T; t++)
    if (mask[t] && !sx_cp_async_complete(x, x->tbase + t, (int64_t)x->k->async[x->tbase + t].committed - n))
      return false;
  return true;
}

bool sx_warp_stmt(sx *x, int op, const tl_expr *call, const uint8_t *mask) {
  switch (op) {
  case TL_INTRIN_PTX_LDMATRIX: return do_ldmatrix(x, call, mask);
  case TL_INTRIN_PTX_STMATRIX: return do_stmatrix(x, call, mask);
  case TL_INTRIN_PTX_MMA: return do_mma(x, call, mask);
  case TL_INTRIN_PTX_MMA_SP: return sx_mma_sp(x, call, mask); /* simt_mma.c */
  case TL_INTRIN_PTX_CP_ASYNC: return do_cp_async(x, call, mask);
  case TL_INTRIN_PTX_COMMIT_GROUP: return do_commit(x, mask);
  case TL_INTRIN_PTX_WAIT_GROUP: return do_wait(x, call, mask);
  default: return sx_fail(x, "internal error: not a warp statement");
  }
}

/* ------------------------------------------------------------- shuffles */
bool sx_shuffle(sx *x, int op, const tl_expr *e, const uint8_t *mask, sx_val *out) {
  const char *name = tl_intrinsics[e->u.call.op].name;
  int n = e->u.call.n;
  tl_expr *const *args = e->u.call.args;
  bool sync = op == TL_INTRIN_SHFL_SYNC;
  int first = sync ? 1 : 0;
  if (n < first + 2 || n > first + 3) return sx_fail(x, "T.%s takes %d or %d arguments", name, first + 2, first + 3);
  tl_dtype t = e->dtype;
  if (t.lanes != 1 || t.code == TL_TYPE_HANDLE)
    return sx_fail(x, "T.%s needs a scalar value, not %s", name, tl_dtype_name(t));
  int64_t width = 32;
  if (n == first + 3 &&
      (!tl_expr_is_const_int(args[first + 2], &width) || width < 1 || width > 32 || (width & (width - 1))))
    return sx_fail(x, "T.%s: width must be a constant power of two up to 32", name);
  sx_val mm, v, lane;
  if (sync && !sx_eval_as(x, args[0], TL_DT(TL_TYPE_UINT, 32), mask, &mm)) return false;
  if (!sx_eval_as(x, args[first], t, mask, &v) || !sx_eval_as(x, args[first + 1], TL_INT32, mask, &lane)) return false;
  if (!sync && !sx_full_warps(x, mask, name)) return false;
  out->t = t;
  out->v = sx_scratch(x, sizeof(sx_el) * (size_t)x->T);
  if (!out->v) return false;
  uint32_t c = ((uint32_t)(32 - width) << 8) | (op == TL_INTRIN_SHFL_UP ? 0u : 0x1fu);
  int64_t segmask = (c >> 8) & 0x1f, clamp = c & 0x1f;
  for (int th = 0; th < x->T; th++) {
    if (!mask[th]) continue;
    int w = th & ~31, l = th & 31;
    uint32_t members = sync ? (uint32_t)mm.v[th].i : 0xFFFFFFFFu;
    if (sync) {
      if (!((members >> l) & 1))
        return sx_fail(x, "T.%s: thread %d is not in its own member mask 0x%08x", name, x->tbase + th, members);
      for (int j = 0; j < 32; j++)
        if (((members >> j) & 1) && (w + j >= x->T || !mask[w + j]))
          return sx_fail(x, "T.%s: lane %d of warp %d is in the member mask 0x%08x but does not execute the shuffle",
                         name, j, w / 32, members);
    }
    int64_t b = (int64_t)(uint32_t)lane.v[th].i;
    int64_t maxl = (l & segmask) | (clamp & ~segmask), minl = l & segmask, j;
    bool pval;
    switch (op) {
    case TL_INTRIN_SHFL_UP:
      j = l - b;
      pval = j >= maxl;
      break;
    case TL_INTRIN_SHFL_DOWN:
      j = l + b;
      pval = j <= maxl;
      break;
    case TL_INTRIN_SHFL_XOR:
      j = l ^ b;
      pval = j <= maxl;
      break;
    default:
      j = minl | (b & ~segmask);
      pval = j <= maxl;
      break;
    }
    if (!pval) j = l;
    if (!((members >> j) & 1))
      return sx_fail(x, "T.%s: thread %d reads lane %lld, which is not in the member mask 0x%08x", name, th,
                     (long long)j, members);
    out->v[th] = v.v[w + j];
  }
  return true;
}
