/* Code generation of memory and addressing (see codegen_internal.h):
 *  - local / local.var buffers are allocas in the entry block (SROA/mem2reg
 *    promote them); shared.dyn buffers live at 16-byte aligned offsets of
 *    one `extern __shared__` array; buffers placed by shared-memory planning
 *    (smem_planned) use their smem_offset, the rest follow them, and
 *    smem_bytes covers both;
 *  - buffer accesses flatten n-d indices row-major in i64; a last index
 *    T.ramp(b, 1, L) is a vector access of L lanes aligned to L*elem bytes
 *    (capped at 16); other vector indices become per-lane gathers/scatters;
 *  - T.ptx_cp_async → llvm.nvvm.cp.async.{ca,cg}.shared.global.{4,8,16}, in
 *    the .s (src-size) form when the predicate is not constant true:
 *    src-size 0 reads nothing and zero-fills; its global offset is computed
 *    in 64 bits (PTX ISA §9.7.9.25.3);
 *  - T.ptx_atomic_add → atomicrmw fadd/add monotonic on the global address,
 *    or inline red/atom.global.add.noftz.{f16x2,bf16x2} for 16-bit float
 *    pairs (cg_gen_atomic_add). */
#include "NVPTX/codegen_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------- buffers */
buf_info *cg_get_buf(cg *g, const tl_buffer *b, tl_loc loc) {
  buf_info *bi = tl_map_get(&g->bufs, b, NULL);
  if (!bi) cg_error(g, loc, "buffer '%s' is used outside its allocation", b->name);
  return bi;
}

static LLVMValueRef to_i64(cg *g, LLVMValueRef v, tl_dtype t) {
  LLVMTypeRef i64t = shaped(LLVMTypeOf(v), g->t_i64);
  unsigned w = LLVMGetIntTypeWidth(type_is_vector(LLVMTypeOf(v)) ? LLVMGetElementType(LLVMTypeOf(v)) : LLVMTypeOf(v));
  if (w == 64) return v;
  if (is_uint(t) || is_bool(t)) return LLVMBuildZExt(g->B, v, i64t, "");
  return LLVMBuildSExt(g->B, v, i64t, "");
}

/* Index expression → i64 (scalar or vector) */
static LLVMValueRef gen_index(cg *g, const tl_expr *e) {
  if (!tl_dtype_is_int(e->dtype) && !is_bool(e->dtype)) {
    cg_error(g, e->loc, "buffer index must be an integer, not %s", tl_dtype_name(e->dtype));
    return NULL;
  }
  LLVMValueRef v = cg_gen_expr(g, e);
  return v ? to_i64(g, v, e->dtype) : NULL;
}

typedef struct access {
  LLVMValueRef ptr;  /* contiguous: address of the first lane; scalar: the address */
  LLVMValueRef offs; /* gather/scatter: <L x i64> element offsets; else NULL */
  int lanes;         /* lanes of the access */
  unsigned align;
  buf_info *bi;
} access;

/* Computes the address(es) of buf[indices] for an access of `lanes` lanes. */
static bool gen_access(cg *g, const tl_buffer *buf, int n, tl_expr *const *idx, int lanes, tl_loc loc, access *out) {
  buf_info *bi = cg_get_buf(g, buf, loc);
  if (!bi) return false;
  if (n != buf->ndim) {
    cg_error(g, loc, "buffer '%s' has %d dimensions but is indexed with %d", buf->name, buf->ndim, n);
    return false;
  }
  if (n == 0) {
    cg_error(g, loc, "buffer '%s' indexed without indices", buf->name);
    return false;
  }
  memset(out, 0, sizeof *out);
  out->bi = bi;
  out->lanes = lanes;
  /* contiguous vector: last index T.ramp(base, 1, lanes), others scalar */
  bool contiguous = lanes > 1;
  const tl_expr *last = idx[n - 1];
  int64_t stride = 0;
  if (contiguous) {
    contiguous = last->kind == TL_EXPR_RAMP && last->dtype.lanes == lanes &&
                 tl_expr_is_const_int(last->u.ramp.stride, &stride) && stride == 1 &&
                 (!buf->strides || (tl_expr_is_const_int(buf->strides[n - 1], &stride) && stride == 1));
    for (int i = 0; contiguous && i < n - 1; i++) contiguous = idx[i]->dtype.lanes == 1;
  }
  if (lanes == 1) {
    for (int i = 0; i < n; i++)
      if (idx[i]->dtype.lanes != 1) {
        cg_error(g, loc, "vector index into buffer '%s' for a scalar access", buf->name);
        return false;
      }
  }
  bool gather = lanes > 1 && !contiguous;
  LLVMTypeRef offt = gather ? LLVMVectorType(g->t_i64, lanes) : g->t_i64;
  LLVMValueRef off = NULL;
  for (int i = 0; i < n; i++) {
    const tl_expr *ie = (contiguous && i == n - 1) ? last->u.ramp.base : idx[i];
    LLVMValueRef iv = gen_index(g, ie);
    if (!iv) return false;
    if (gather && ie->dtype.lanes == 1) iv = cg_splat(g, iv, lanes);
    else if (gather && ie->dtype.lanes != lanes) {
      cg_error(g, loc, "index of %d lanes in a %d-lane access", ie->dtype.lanes, lanes);
      return false;
    }
    if (buf->strides) {
      LLVMValueRef s = gen_index(g, buf->strides[i]);
      if (!s) return false;
      if (gather) s = cg_splat(g, s, lanes);
      LLVMValueRef term = LLVMBuildMul(g->B, iv, s, "");
      off = off ? LLVMBuildAdd(g->B, off, term, "") : term;
    } else {
      if (off) {
        LLVMValueRef s = gen_index(g, buf->shape[i]);
        if (!s) return false;
        if (gather) s = cg_splat(g, s, lanes);
        off = LLVMBuildAdd(g->B, LLVMBuildMul(g->B, off, s, ""), iv, "");
      } else {
        off = iv;
      }
    }
  }
  (void)offt;
  unsigned eb = (unsigned)tl_dtype_bytes(scalar_of(buf->dtype));
  if (eb == 0) eb = 1;
  if (gather) {
    out->offs = off;
    out->align = eb;
    return true;
  }
  out->ptr = LLVMBuildGEP2(g->B, bi->elem, bi->base, &off, 1, "");
  out->align = eb;
  if (contiguous) {
    unsigned vb = eb * (unsigned)lanes;
    if ((vb & (vb - 1)) == 0) out->align = vb > 16 ? 16 : vb;
  }
  return true;
}

/* Memory value (bool as i8) → register value, and back. */
LLVMValueRef cg_from_mem(cg *g, LLVMValueRef v, tl_dtype t) {
  if (!is_bool(t)) return v;
  return LLVMBuildICmp(g->B, LLVMIntNE, v, cint(LLVMTypeOf(v), 0), "");
}
static LLVMValueRef to_mem(cg *g, LLVMValueRef v, tl_dtype t) {
  if (!is_bool(t)) return v;
  return LLVMBuildZExt(g->B, v, shaped(LLVMTypeOf(v), g->t_i8), "");
}

LLVMValueRef cg_gen_load(cg *g, const tl_expr *e) {
  const tl_buffer *buf = e->u.load.buffer;
  int lanes = e->dtype.lanes;
  access a;
  if (!gen_access(g, buf, e->u.load.n, e->u.load.indices, lanes, e->loc, &a)) return NULL;
  tl_dtype et = scalar_of(buf->dtype);
  LLVMTypeRef lane_mem = cg_lane_type(g, et, true, e->loc);
  if (!lane_mem) return NULL;
  if (!a.offs) {
    LLVMTypeRef ty = lanes > 1 ? LLVMVectorType(lane_mem, lanes) : lane_mem;
    LLVMValueRef v = LLVMBuildLoad2(g->B, ty, a.ptr, "");
    LLVMSetAlignment(v, a.align);
    return cg_from_mem(g, v, with_lanes(et, lanes));
  }
  LLVMTypeRef vt = LLVMVectorType(lane_mem, lanes);
  LLVMValueRef out = LLVMGetPoison(vt);
  for (int i = 0; i < lanes; i++) {
    LLVMValueRef li = LLVMConstInt(g->t_i32, (unsigned)i, 0);
    LLVMValueRef o = LLVMBuildExtractElement(g->B, a.offs, li, "");
    LLVMValueRef p = LLVMBuildGEP2(g->B, a.bi->elem, a.bi->base, &o, 1, "");
    LLVMValueRef v = LLVMBuildLoad2(g->B, lane_mem, p, "");
    LLVMSetAlignment(v, a.align);
    out = LLVMBuildInsertElement(g->B, out, v, li, "");
  }
  return cg_from_mem(g, out, with_lanes(et, lanes));
}

bool cg_gen_store(cg *g, const tl_stmt *s) {
  const tl_buffer *buf = s->u.store.buffer;
  const tl_expr *ve = s->u.store.value;
  int lanes = ve->dtype.lanes;
  for (int i = 0; i < s->u.store.n; i++)
    if (s->u.store.indices[i]->dtype.lanes > lanes) lanes = s->u.store.indices[i]->dtype.lanes;
  tl_dtype et = scalar_of(buf->dtype);
  LLVMValueRef v = cg_gen_as(g, ve, with_lanes(et, lanes));
  if (!v) return false;
  access a;
  if (!gen_access(g, buf, s->u.store.n, s->u.store.indices, lanes, s->loc, &a)) return false;
  a.bi->stored = true;
  v = to_mem(g, v, with_lanes(et, lanes));
  if (!a.offs) {
    LLVMValueRef st = LLVMBuildStore(g->B, v, a.ptr);
    LLVMSetAlignment(st, a.align);
    return true;
  }
  LLVMTypeRef lane_mem = cg_lane_type(g, et, true, s->loc);
  (void)lane_mem;
  for (int i = 0; i < lanes; i++) {
    LLVMValueRef li = LLVMConstInt(g->t_i32, (unsigned)i, 0);
    LLVMValueRef o = LLVMBuildExtractElement(g->B, a.offs, li, "");
    LLVMValueRef p = LLVMBuildGEP2(g->B, a.bi->elem, a.bi->base, &o, 1, "");
    LLVMValueRef st = LLVMBuildStore(g->B, LLVMBuildExtractElement(g->B, v, li, ""), p);
    LLVMSetAlignment(st, a.align);
  }
  return true;
}

static bool const_elems(cg *g, const tl_buffer *b, int64_t *out) {
  int64_t n = 1;
  for (int i = 0; i < b->ndim; i++) {
    int64_t d;
    if (!tl_expr_is_const_int(b->shape[i], &d) || d < 0) {
      cg_error(g, b->loc, "buffer '%s' (%s) needs a constant shape", b->name, tl_scope_name(b->scope));
      return false;
    }
    if (d != 0 && n > INT64_MAX / 64 / d) {
      cg_error(g, b->loc, "buffer '%s' is too large", b->name);
      return false;
    }
    n *= d;
  }
  *out = n;
  return true;
}

/* A T.make_tensor view: its base is the address, evaluated here, as a
 * global pointer (the view's loads and stores index it like a parameter's). */
static bool gen_view(cg *g, const tl_buffer *b) {
  LLVMValueRef a = cg_gen_as(g, b->data, TL_INT64);
  buf_info *bi = a ? tl_arena_alloc(&g->arena, sizeof *bi) : NULL;
  if (!bi) return false;
  memset(bi, 0, sizeof *bi);
  bi->base = LLVMBuildIntToPtr(g->B, a, g->t_ptr1, b->name);
  g->has_view = true;
  bi->elem = cg_type_of(g, b->dtype, true, b->loc);
  return bi->elem && tl_map_put(&g->bufs, b, bi);
}

bool cg_gen_alloc(cg *g, const tl_stmt *s) {
  tl_buffer *b = s->u.alloc.buffer;
  if (tl_buffer_is_view(b)) return gen_view(g, b);
  if (b->scope == TL_SCOPE_GLOBAL && tl_map_get(&g->bufs, b, NULL)) return true; /* a workspace parameter */
  tl_dtype et = scalar_of(b->dtype);
  LLVMTypeRef elem = cg_lane_type(g, et, true, b->loc);
  if (!elem) return false;
  int64_t n;
  if (!const_elems(g, b, &n)) return false;
  int64_t eb = tl_dtype_bytes(et) * (int64_t)b->dtype.lanes;
  if (eb <= 0) eb = 1;
  if (b->dtype.lanes > 1) elem = LLVMVectorType(elem, b->dtype.lanes);
  buf_info *bi = tl_arena_alloc(&g->arena, sizeof *bi);
  if (!bi) return false;
  bi->elem = elem;
  if (n == 0) n = 1;
  switch (b->scope) {
  case TL_SCOPE_LOCAL:
  case TL_SCOPE_LOCAL_VAR:
  case TL_SCOPE_FRAGMENT: {
    if (n * eb > TL_CG_MAX_LOCAL_BYTES) {
      cg_error(g, b->loc, "local buffer '%s' needs %lld bytes per thread (limit %d)", b->name, (long long)(n * eb),
               TL_CG_MAX_LOCAL_BYTES);
      return false;
    }
    LLVMBuilderRef ab = LLVMCreateBuilderInContext(g->C);
    LLVMValueRef term = LLVMGetBasicBlockTerminator(g->entry);
    if (term) LLVMPositionBuilderBefore(ab, term);
    else LLVMPositionBuilderAtEnd(ab, g->entry);
    LLVMValueRef a = LLVMBuildAlloca(ab, LLVMArrayType2(elem, (uint64_t)n), b->name);
    LLVMSetAlignment(a, 16);
    LLVMDisposeBuilder(ab);
    bi->base = a;
    if (b->init) {
      LLVMValueRef v = cg_gen_as(g, b->init, b->dtype);
      if (!v) return false;
      LLVMValueRef st = LLVMBuildStore(g->B, to_mem(g, v, b->dtype), a);
      LLVMSetAlignment(st, (unsigned)(eb < 16 ? eb : 16));
    }
    break;
  }
  case TL_SCOPE_SHARED_DYN: {
    /* planned buffers sit where shared-memory planning put them (lib/Lower);
     * unplanned ones follow at 16-byte aligned offsets after all planned ones */
    int64_t off = b->smem_planned ? b->smem_offset : (g->smem_off + 15) & ~(int64_t)15;
    if (n * eb > (int64_t)1 << 40 || off > ((int64_t)1 << 40) || off < 0) {
      cg_error(g, b->loc, "shared buffer '%s' is too large", b->name);
      return false;
    }
    if (b->smem_planned && off % eb != 0) {
      cg_error(g, b->loc, "shared buffer '%s' planned at byte offset %lld, not a multiple of its %lld-byte element",
               b->name, (long long)off, (long long)eb);
      return false;
    }
    if (b->smem_planned) {
      if (off + n * eb > g->smem_planned_end) g->smem_planned_end = off + n * eb;
    } else {
      g->smem_off = off + n * eb;
    }
    if (!g->smem) {
      g->smem = LLVMGetNamedGlobal(g->M, "tl_smem");
      if (!g->smem) {
        g->smem = LLVMAddGlobalInAddressSpace(g->M, LLVMArrayType2(g->t_i8, 0), "tl_smem", 3);
        LLVMSetLinkage(g->smem, LLVMExternalLinkage);
        LLVMSetAlignment(g->smem, 16);
      }
    }
    LLVMValueRef o = LLVMConstInt(g->t_i64, (uint64_t)off, 0);
    bi->base = LLVMBuildGEP2(g->B, g->t_i8, g->smem, &o, 1, b->name);
    int64_t total = g->smem_off > g->smem_planned_end ? g->smem_off : g->smem_planned_end;
    if (total > g->target->max_smem_per_block) {
      cg_error(g, b->loc, "shared memory of %lld bytes exceeds the %d bytes a block may use on %s", (long long)total,
               g->target->max_smem_per_block, g->target->name);
      return false;
    }
    break;
  }
  case TL_SCOPE_SHARED: {
    char *gname = tl_arena_printf(&g->arena, "%s.%s.shared", g->f->name, b->name);
    if (!gname) return false;
    LLVMTypeRef at = LLVMArrayType2(elem, (uint64_t)n);
    LLVMValueRef gv = LLVMAddGlobalInAddressSpace(g->M, at, gname, 3);
    LLVMSetLinkage(gv, LLVMInternalLinkage);
    LLVMSetInitializer(gv, LLVMGetUndef(at));
    LLVMSetAlignment(gv, 16);
    bi->base = gv;
    break;
  }
  case TL_SCOPE_GLOBAL: cg_error(g, b->loc, "global buffer '%s' allocated inside a kernel", b->name); return false;
  }
  return tl_map_put(&g->bufs, b, bi);
}

/* An integer index expression evaluated in i64 throughout: + - * of
 * integer operands are computed on 64-bit values (the leaves are
 * sign/zero-extended), so a flat offset into a large tensor does not wrap
 * in 32 bits (docs/simt-ir.md: cp.async src_off uses int64 arithmetic). */
LLVMValueRef cg_gen_index64(cg *g, const tl_expr *e, int depth) {
  if (!tl_dtype_is_int(e->dtype) && !is_bool(e->dtype)) {
    cg_error(g, e->loc, "offset must be an integer, not %s", tl_dtype_name(e->dtype));
    return NULL;
  }
  if (e->dtype.lanes != 1) {
    cg_error(g, e->loc, "offset must be a scalar");
    return NULL;
  }
  if (e->kind == TL_EXPR_INT) return LLVMConstInt(g->t_i64, (uint64_t)e->u.ival, 1);
  if (e->kind == TL_EXPR_BINARY && depth < 64 && !is_uint(e->dtype) &&
      (e->u.bin.op == TL_OP_ADD || e->u.bin.op == TL_OP_SUB || e->u.bin.op == TL_OP_MUL) &&
      tl_dtype_is_int(e->u.bin.a->dtype) && tl_dtype_is_int(e->u.bin.b->dtype) && !is_uint(e->u.bin.a->dtype) &&
      !is_uint(e->u.bin.b->dtype)) {
    LLVMValueRef a = cg_gen_index64(g, e->u.bin.a, depth + 1);
    LLVMValueRef b = a ? cg_gen_index64(g, e->u.bin.b, depth + 1) : NULL;
    if (!b) return NULL;
    switch (e->u.bin.op) {
    case TL_OP_ADD: return LLVMBuildNSWAdd(g->B, a, b, "");
    case TL_OP_SUB: return LLVMBuildNSWSub(g->B, a, b, "");
    default: return LLVMBuildNSWMul(g->B, a, b, "");
    }
  }
  return gen_index(g, e);
}

/* Argument i of an intrinsic call as a buffer reference. */
const tl_buffer *cg_buffer_arg(cg *g, const tl_expr *e, int i, const char *what) {
  const tl_expr *a = e->u.call.args[i];
  if (!a || a->kind != TL_EXPR_BUFFER || !a->u.buffer) {
    cg_error(g, a ? a->loc : e->loc, "T.%s: argument %d (%s) must be a buffer", tl_intrinsics[e->u.call.op].name, i + 1,
             what);
    return NULL;
  }
  return a->u.buffer;
}

bool cg_const_arg(cg *g, const tl_expr *e, int i, const char *what, int64_t *v) {
  const tl_expr *a = e->u.call.args[i];
  if (!a || !tl_expr_is_const_int(a, v)) {
    cg_error(g, a ? a->loc : e->loc, "T.%s: argument %d (%s) must be a constant", tl_intrinsics[e->u.call.op].name,
             i + 1, what);
    return false;
  }
  return true;
}

/* Address of element `off` (an int expression) of buffer b viewed flat. */
LLVMValueRef cg_elem_addr(cg *g, const tl_buffer *b, const tl_expr *off, tl_loc loc) {
  buf_info *bi = cg_get_buf(g, b, loc);
  if (!bi) return NULL;
  if (b->dtype.lanes != 1) {
    cg_error(g, loc, "buffer '%s' of vector dtype %s in a warp-level intrinsic", b->name, tl_dtype_name(b->dtype));
    return NULL;
  }
  LLVMValueRef o = cg_gen_index64(g, off, 0);
  if (!o) return NULL;
  return LLVMBuildGEP2(g->B, bi->elem, bi->base, &o, 1, "");
}
/* Address of element base + k (k constant) of a local buffer. */
LLVMValueRef cg_local_addr(cg *g, const tl_buffer *b, LLVMValueRef base_off, int k) {
  buf_info *bi = cg_get_buf(g, b, b->loc);
  if (!bi) return NULL;
  LLVMValueRef o = LLVMBuildAdd(g->B, base_off, LLVMConstInt(g->t_i64, (uint64_t)k, 0), "");
  return LLVMBuildGEP2(g->B, bi->elem, bi->base, &o, 1, "");
}

/* T.ptx_cp_async(dst, dst_off, src, src_off, bytes, pred) */
bool cg_gen_cp_async(cg *g, const tl_expr *e) {
  tl_loc loc = e->loc;
  const tl_buffer *dst = cg_buffer_arg(g, e, 0, "dst"), *src = dst ? cg_buffer_arg(g, e, 2, "src") : NULL;
  int64_t bytes;
  if (!src || !cg_const_arg(g, e, 4, "bytes", &bytes)) return false;
  if (bytes != 4 && bytes != 8 && bytes != 16) {
    cg_error(g, loc, "T.ptx_cp_async: bytes must be 4, 8 or 16, not %lld", (long long)bytes);
    return false;
  }
  if (!is_shared_scope(dst->scope)) {
    cg_error(g, loc, "T.ptx_cp_async: dst '%s' must be a shared buffer (it is %s)", dst->name,
             tl_scope_name(dst->scope));
    return false;
  }
  if (src->scope != TL_SCOPE_GLOBAL) {
    cg_error(g, loc, "T.ptx_cp_async: src '%s' must be a global tensor (it is %s)", src->name,
             tl_scope_name(src->scope));
    return false;
  }
  int64_t db = tl_dtype_bytes(dst->dtype), sb = tl_dtype_bytes(src->dtype);
  if (db != sb || bytes % db != 0 || dst->dtype.lanes != 1 || src->dtype.lanes != 1) {
    cg_error(g, loc,
             "T.ptx_cp_async: %lld bytes between '%s' (%s) and '%s' (%s): the element sizes "
             "must agree and divide the copy",
             (long long)bytes, dst->name, tl_dtype_name(dst->dtype), src->name, tl_dtype_name(src->dtype));
    return false;
  }
  const tl_expr *pe = e->u.call.args[5];
  int64_t pc = 0;
  bool always = tl_expr_is_const_int(pe, &pc) && pc != 0;
  LLVMValueRef dp = cg_elem_addr(g, dst, e->u.call.args[1], loc);
  LLVMValueRef sp = dp ? cg_elem_addr(g, src, e->u.call.args[3], loc) : NULL;
  if (!sp) return false;
  int k = bytes == 4 ? 0 : bytes == 8 ? 1 : 2;
  LLVMValueRef args[3] = {dp, sp, NULL}, r;
  if (always) {
    static const int plain[3] = {NV_CP_ASYNC_CA4, NV_CP_ASYNC_CA8, NV_CP_ASYNC_CG16};
    r = cg_call_intrinsic(g, plain[k], NULL, 0, args, 2);
  } else {
    static const int zfill[3] = {NV_CP_ASYNC_CA4_S, NV_CP_ASYNC_CA8_S, NV_CP_ASYNC_CG16_S};
    LLVMValueRef p = cg_gen_cond(g, pe);
    if (!p) return false;
    if (pe->dtype.lanes != 1) {
      cg_error(g, pe->loc, "T.ptx_cp_async: pred must be a scalar");
      return false;
    }
    /* false: src-size 0, nothing is read and the bytes are zero-filled */
    args[2] = LLVMBuildSelect(g->B, p, LLVMConstInt(g->t_i32, (uint64_t)bytes, 0), LLVMConstInt(g->t_i32, 0, 0), "");
    r = cg_call_intrinsic(g, zfill[k], NULL, 0, args, 3);
  }
  buf_info *bi = cg_get_buf(g, dst, loc);
  if (bi) bi->stored = true;
  return r != NULL;
}

/* T.ptx_atomic_add(dst, off, value, return_prev) (docs/simt-ir.md
 * "Atomics"; PTX ISA §9.7.13.4 atom, §9.7.13.5 red): relaxed atomic adds
 * at element off of the global tensor dst, or of a shared buffer (the addrspace(3)
 * pointer: atom.shared, lane by lane).  Scalars are `atomicrmw
 * fadd/add monotonic` on the addrspace(1) pointer (LLVM 19 selects
 * atom.global.add.{f32,f64,noftz.f16,noftz.bf16 (sm_90)} and expands what
 * the target lacks, bf16 on sm_80 and 8/16-bit integers, into a
 * compare-and-swap loop, so no encoding can make it abort).  A 2-lane
 * float16 value (bfloat16 on sm_90) is one inline
 * `red.global.add.noftz.{f16x2,bf16x2}` (or `atom...` when its value is
 * used: return_prev), since LLVM 19 turns <2 x half> atomicrmw into a CAS
 * loop; the pair is 4-byte aligned (the lowering proves off even).  Other
 * vectors are one scalar atomic per lane.  The value is the old contents.
 * T.ptx_atomic_max / _min: `atomicrmw max/min` (umax/umin for unsigned;
 * PTX atom.max/min .s32/.u32/.s64/.u64) and `atomicrmw fmax/fmin` for floats,
 * which LLVM 19 expands into a compare-and-swap loop over maxnum/minnum (PTX
 * has no float atom.max before sm_90's f16/bf16 forms). */
LLVMValueRef cg_gen_atomic_add(cg *g, const tl_expr *e) {
  tl_loc loc = e->loc;
  if (e->u.call.n != 4) {
    cg_error(g, loc, "T.ptx_atomic_add takes 4 arguments, got %d", e->u.call.n);
    return NULL;
  }
  const tl_buffer *b = cg_buffer_arg(g, e, 0, "dst");
  int64_t rp;
  if (!b || !cg_const_arg(g, e, 3, "return_prev", &rp)) return NULL;
  bool shared = b->scope == TL_SCOPE_SHARED || b->scope == TL_SCOPE_SHARED_DYN;
  if (b->scope != TL_SCOPE_GLOBAL && !shared) {
    cg_error(g, loc, "T.ptx_atomic_add: dst '%s' must be a global tensor or a shared buffer (it is %s)", b->name,
             tl_scope_name(b->scope));
    return NULL;
  }
  tl_dtype t = e->dtype, et = scalar_of(t);
  int L = t.lanes ? t.lanes : 1;
  if (!tl_dtype_eq(et, b->dtype) || is_bool(et) || t.code == TL_TYPE_TFLOAT) {
    cg_error(g, loc, "T.ptx_atomic_add: a %s value cannot be added atomically to '%s' of %s", tl_dtype_name(t), b->name,
             tl_dtype_name(b->dtype));
    return NULL;
  }
  LLVMValueRef v = cg_gen_as(g, e->u.call.args[2], t);
  LLVMValueRef p = v ? cg_elem_addr(g, b, e->u.call.args[1], loc) : NULL;
  buf_info *bi = p ? cg_get_buf(g, b, loc) : NULL;
  if (!bi) return NULL;
  bi->stored = true;
  bool fl = tl_dtype_is_float(et);
  unsigned eb = (unsigned)tl_dtype_bytes(et);
  int op = e->u.call.op;
  if (!shared && op == TL_INTRIN_PTX_ATOMIC_ADD && L == 2 &&
      (is_f16(et) || (is_bf16(et) && g->target->atomic_add_bf16x2))) {
    const char *ty = is_f16(et) ? "f16x2" : "bf16x2";
    char text[96];
    snprintf(text, sizeof text, rp ? "atom.global.add.noftz.%s $0, [$1], $2;" : "red.global.add.noftz.%s [$0], $1;",
             ty);
    const char *cons = rp ? "=r,l,r,~{memory}" : "l,r,~{memory}";
    LLVMValueRef addr = LLVMBuildPtrToInt(g->B, p, g->t_i64, "");
    LLVMValueRef bits = LLVMBuildBitCast(g->B, v, g->t_i32, "");
    LLVMValueRef args[2] = {addr, bits};
    LLVMValueRef r = cg_call_asm(g, rp ? g->t_i32 : g->t_void, text, cons, args, 2);
    if (!rp) return LLVMGetPoison(LLVMTypeOf(v));
    return LLVMBuildBitCast(g->B, r, LLVMTypeOf(v), "");
  }
  LLVMValueRef out = L > 1 ? LLVMGetPoison(LLVMTypeOf(v)) : NULL;
  for (int l = 0; l < L; l++) {
    LLVMValueRef li = LLVMConstInt(g->t_i32, (unsigned)l, 0);
    LLVMValueRef x = L > 1 ? LLVMBuildExtractElement(g->B, v, li, "") : v;
    LLVMValueRef q = p;
    if (l > 0) {
      LLVMValueRef o = LLVMConstInt(g->t_i64, (unsigned)l, 0);
      q = LLVMBuildGEP2(g->B, bi->elem, p, &o, 1, "");
    }
    LLVMAtomicRMWBinOp bop = fl ? LLVMAtomicRMWBinOpFAdd : LLVMAtomicRMWBinOpAdd;
    bool uns = et.code == TL_TYPE_UINT;
    if (op == TL_INTRIN_PTX_ATOMIC_MAX)
      bop = fl ? LLVMAtomicRMWBinOpFMax : uns ? LLVMAtomicRMWBinOpUMax : LLVMAtomicRMWBinOpMax;
    else if (op == TL_INTRIN_PTX_ATOMIC_MIN)
      bop = fl ? LLVMAtomicRMWBinOpFMin : uns ? LLVMAtomicRMWBinOpUMin : LLVMAtomicRMWBinOpMin;
    LLVMValueRef r = LLVMBuildAtomicRMW(g->B, bop, q, x, LLVMAtomicOrderingMonotonic, 0);
    LLVMSetAlignment(r, eb);
    out = L > 1 ? LLVMBuildInsertElement(g->B, out, r, li, "") : r;
  }
  return out;
}
