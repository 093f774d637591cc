/* Argument binding (lib/Runtime): the checks of a kernel call (docs/runtime.md "A kernel and a call").
 *
 * Role: match a call's arguments (DLPack tensors and scalars, parameters in
 * prim_func order without the out_idx outputs) against the kernel's
 * signature before anything is allocated or launched.  Algorithm: one pass
 * over the parameters checks kind, device type and id, dtype, ndim, each
 * static dim, binds each dynamic symbol from the first tensor dim that is
 * exactly that symbol (later uses must agree), contiguity (strides NULL =
 * compact; size-1 dims may have any stride), non-null data and the alignment
 * of data + byte_offset; a second pass evaluates dims that are expressions of
 * symbols, the output shapes, the grid and the block size (a grid dim of 0
 * from a zero-size dynamic dim makes an empty call, tl_rt_binding.empty).
 * Every failure becomes one line "argument 'B' (#1): what: expected X, got
 * Y"; all lines are reported together.  Scalars are encoded into 8-byte
 * slots in the parameter's dtype (f16/bf16 rounded to nearest even; a finite
 * float the dtype cannot hold is an error), dynamic symbols as int32 (int64
 * for T.dynamic(name, "int64")) after the parameters (kernel ABI,
 * docs/simt-ir.md).  No driver call is made here. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "Runtime/arg_messages.h"
#include "Runtime/kernel.h"
#include "Support/context.h"

#define MAX_REPORTED TL_MSG_MAX_REPORTED

typedef struct binder {
  const tl_rt_sig *sig;
  bool cpu; /* tensors must be host memory (the CPU executors) */
  tl_strbuf msg;
  int nerr;
  bool oom;
} binder;

static void errf(binder *b, const char *pname, size_t pos, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void errf(binder *b, const char *pname, size_t pos, const char *fmt, ...) {
  b->nerr++;
  if (b->nerr > MAX_REPORTED) return;
  if (b->msg.len) tl_strbuf_append(&b->msg, "\n");
  if (pname) tl_strbuf_printf(&b->msg, TL_MSG_ARG, pname, pos);
  va_list ap;
  va_start(ap, fmt);
  tl_strbuf_vprintf(&b->msg, fmt, ap);
  va_end(ap);
}

/* ---------------------------------------------------------- dtypes */
static const char *dl_device_name(int type) {
  switch (type) {
  case kDLCPU: return "cpu";
  case kDLCUDA: return "cuda";
  case kDLCUDAHost: return "cuda_host";
  case kDLCUDAManaged: return "cuda_managed";
  case kDLOpenCL: return "opencl";
  case kDLVulkan: return "vulkan";
  case kDLMetal: return "metal";
  case kDLROCM: return "rocm";
  default: return "unknown";
  }
}

/* DLPack dtype → tl_dtype; false for codes we have no dtype for. */
static bool dl_to_tl(DLDataType d, tl_dtype *out) {
  switch (d.code) {
  case kDLInt: out->code = TL_TYPE_INT; break;
  case kDLUInt: out->code = TL_TYPE_UINT; break;
  case kDLFloat: out->code = TL_TYPE_FLOAT; break;
  case kDLBfloat: out->code = TL_TYPE_BFLOAT; break;
  case 6: out->code = TL_TYPE_BOOL; break; /* kDLBool in DLPack >= 0.8 */
  default: return false;
  }
  out->bits = d.bits;
  out->lanes = d.lanes;
  return true;
}

void tl_rt_dl_dtype_text(DLDataType d, char *buf, size_t n) {
  tl_dtype t;
  if (dl_to_tl(d, &t) && (t.code != TL_TYPE_BOOL || t.bits == 8)) {
    const char *name = tl_dtype_name(t);
    if (name && *name && strcmp(name, "unknown") != 0) {
      snprintf(buf, n, "%s", name);
      return;
    }
  }
  snprintf(buf, n, "dlpack(code=%u, bits=%u, lanes=%u)", d.code, d.bits, d.lanes);
}

DLDataType tl_rt_dl_dtype(tl_dtype t) {
  t = tl_dtype_storage(t, NULL); /* int4 / uint4 tensors are int8 / uint8 ones */
  DLDataType d;
  d.code = t.code == TL_TYPE_INT                              ? kDLInt
           : t.code == TL_TYPE_UINT || t.code == TL_TYPE_BOOL ? kDLUInt
           : tl_dtype_is_fp8(t)                               ? kDLUInt
           : t.code == TL_TYPE_BFLOAT                         ? kDLBfloat
                                                              : kDLFloat;
  d.bits = (uint8_t)t.bits;
  d.lanes = (uint16_t)(t.lanes ? t.lanes : 1);
  return d;
}

void tl_rt_dl_output(DLManagedTensor *m, void *data, DLDevice dev, const tl_rt_param *p, int64_t *shape, void *owner,
                     void (*deleter)(DLManagedTensor *)) {
  DLTensor *t = &m->dl_tensor;
  t->data = data;
  t->device = dev;
  t->ndim = p->ndim;
  t->dtype = tl_rt_dl_dtype(p->dtype);
  t->shape = shape;
  t->strides = NULL;
  t->byte_offset = 0;
  m->manager_ctx = owner;
  m->deleter = deleter;
}

static bool dtype_matches(tl_dtype want, DLDataType got) {
  tl_dtype g;
  if (!dl_to_tl(got, &g)) return false;
  if (tl_dtype_is_fp8(want)) /* float8 crosses DLPack 0.6 as 8-bit ints: the codes' bytes */
    return got.bits == 8 && got.lanes == want.lanes && (g.code == TL_TYPE_INT || g.code == TL_TYPE_UINT);
  if (want.code == TL_TYPE_BOOL) /* bool crosses DLPack 0.6 as 8-bit ints */
    return got.bits == 8 && got.lanes == 1 &&
           (g.code == TL_TYPE_INT || g.code == TL_TYPE_UINT || g.code == TL_TYPE_BOOL);
  if (tl_dtype_is_int4(want)) /* stored packed in int8 / uint8 (tl_dtype_storage) */
    return tl_dtype_eq(tl_dtype_storage(want, NULL), g);
  if (want.code == TL_TYPE_TFLOAT) /* tfloat32 data is stored as float32 */
    return g.code == TL_TYPE_FLOAT && g.bits == 32 && g.lanes == want.lanes;
  return tl_dtype_eq(want, g);
}

/* ------------------------------------------------ float encodings */
/* Rounds |x| (finite, non-negative) to a binary float with mbits mantissa
 * bits and ebits exponent bits, nearest-even; returns the bit pattern. */
static uint32_t small_float_bits(double x, int mbits, int ebits) {
  uint32_t sign = signbit(x) ? 1u << (mbits + ebits) : 0;
  uint32_t inf = ((1u << ebits) - 1) << mbits;
  if (isnan(x)) return inf | (1u << (mbits - 1));
  x = fabs(x);
  int bias = (1 << (ebits - 1)) - 1;
  if (isinf(x)) return sign | inf;
  if (x < ldexp(1.0, 1 - bias)) { /* subnormal (may round up to the smallest normal) */
    double q = nearbyint(ldexp(x, bias - 1 + mbits));
    return sign | (uint32_t)q;
  }
  int e;
  double m = frexp(x, &e); /* x = m * 2^e, m in [0.5, 1) */
  double q = nearbyint(ldexp(m, mbits + 1));
  int E = e - 1 + bias;
  if (q >= ldexp(1.0, mbits + 1)) {
    q = ldexp(1.0, mbits);
    E++;
  }
  if (E >= (1 << ebits) - 1) return sign | inf;
  return sign | ((uint32_t)E << mbits) | ((uint32_t)q - (1u << mbits));
}

/* What argument a is, for "got ..." (an out-of-range kind is named with
 * its value: a caller's uninitialised tl_arg). */
static const char *arg_kind_text(const tl_arg *a, char *buf, size_t n) {
  switch (a->kind) {
  case TL_ARG_TENSOR: return a->v.tensor ? "a tensor" : "a NULL tensor";
  case TL_ARG_INT: return "an integer scalar";
  case TL_ARG_FLOAT: return "a float scalar";
  }
  snprintf(buf, n, "an argument of unknown kind %d (expected TL_ARG_TENSOR, TL_ARG_INT or TL_ARG_FLOAT)", (int)a->kind);
  return buf;
}

/* Encodes a scalar argument of dtype t into *slot; false with a reason. */
static bool encode_scalar(tl_dtype t, const tl_arg *a, uint64_t *slot, int64_t *ival, char *why, size_t nwhy) {
  *slot = 0;
  *ival = 0;
  if (t.lanes != 1) {
    snprintf(why, nwhy, "vector scalar parameters are not supported");
    return false;
  }
  if (tl_dtype_is_int(t) || t.code == TL_TYPE_BOOL) {
    if (a->kind != TL_ARG_INT) {
      char kb[96];
      snprintf(why, nwhy, "kind: expected an integer scalar (%s), got %s", tl_dtype_name(t),
               arg_kind_text(a, kb, sizeof kb));
      return false;
    }
    int64_t v = a->v.i;
    bool ok;
    if (t.code == TL_TYPE_BOOL) ok = v == 0 || v == 1;
    else if (t.code == TL_TYPE_INT)
      ok = t.bits >= 64 || (v >= -(INT64_C(1) << (t.bits - 1)) && v < (INT64_C(1) << (t.bits - 1)));
    else ok = v >= 0 && (t.bits >= 64 || v < (INT64_C(1) << t.bits));
    if (!ok) {
      snprintf(why, nwhy, TL_MSG_SCALAR_INT_RANGE, tl_dtype_name(t), v);
      return false;
    }
    *ival = v;
    uint64_t u = (uint64_t)v;
    if (t.bits < 64) u &= (UINT64_C(1) << t.bits) - 1;
    *slot = u;
    return true;
  }
  if (tl_dtype_is_float(t)) {
    double d;
    if (a->kind == TL_ARG_FLOAT) d = a->v.f;
    else if (a->kind == TL_ARG_INT) d = (double)a->v.i;
    else {
      char kb[96];
      snprintf(why, nwhy, "kind: expected a float scalar (%s), got %s", tl_dtype_name(t),
               arg_kind_text(a, kb, sizeof kb));
      return false;
    }
    double r = tl_round_to_dtype(d, t);
    if (isinf(r) && !isinf(d)) { /* a finite value the dtype cannot hold (1e300 for float32) */
      char num[32];
      for (int prec = 6; prec <= 17; prec++) { /* the shortest text that reads back as d */
        snprintf(num, sizeof num, "%.*g", prec, d);
        if (strtod(num, NULL) == d) break;
      }
      snprintf(why, nwhy, TL_MSG_SCALAR_FLOAT_RANGE, tl_dtype_name(t), num);
      return false;
    }
    if (t.code == TL_TYPE_FLOAT && t.bits == 64) memcpy(slot, &d, 8);
    else if ((t.code == TL_TYPE_FLOAT || t.code == TL_TYPE_TFLOAT) && t.bits == 32) {
      float f = (float)d;
      uint32_t u;
      memcpy(&u, &f, 4);
      *slot = u;
    } else if (t.code == TL_TYPE_FLOAT && t.bits == 16) *slot = small_float_bits(d, 10, 5);
    else if (t.code == TL_TYPE_BFLOAT && t.bits == 16) *slot = small_float_bits(d, 7, 8);
    else {
      snprintf(why, nwhy, "scalar parameters of dtype %s are not supported", tl_dtype_name(t));
      return false;
    }
    return true;
  }
  snprintf(why, nwhy, "scalar parameters of dtype %s are not supported", tl_dtype_name(t));
  return false;
}

void tl_rt_param_shape_text(tl_strbuf *s, const tl_rt_param *p, const tl_rt_sig *sig) {
  tl_strbuf_printf(s, "%s[", tl_dtype_name(p->dtype));
  for (int d = 0; d < p->ndim; d++) {
    if (d) tl_strbuf_append(s, ", ");
    tl_rx_print(s, &p->dims[d].prog, sig);
  }
  tl_strbuf_append(s, "]");
}

void tl_rt_binding_free(tl_rt_binding *b) {
  if (b->out_shapes && b->has_outputs)
    for (int i = 0; i < b->nparams; i++)
      if (b->out_shapes[i]) free(b->out_shapes[i]);        /* most are NULL: no call per parameter */
  if (b->block_mem != b->inline_words) free(b->block_mem); /* every per-parameter array lives in this one block */
  if (b->tma_maps != b->inline_maps[0]) free(b->tma_maps);
  memset(b, 0, TL_RT_BINDING_HEAD);
}

/* One dim (stride: false) or element stride (true) d of tensor parameter pi
 * whose declared value is prog: a constant must equal got, a symbol is bound
 * by its first use (bound_dim: d for a dim, -1 - d for a stride) and later
 * uses must agree. */
static void bind_dim(binder *b, int pi, size_t pos, const tl_rx_prog *prog, int d, bool stride, int64_t got,
                     tl_rt_binding *out, bool *bound, int *bound_by, int *bound_dim) {
  const tl_rt_sig *sig = b->sig;
  const char *nm = sig->params[pi].name, *what = stride ? "strides" : "shape";
  int64_t c;
  int s;
  if (tl_rx_is_const(prog, &c)) {
    if (got != c) errf(b, nm, pos, TL_MSG_DIM_CONST, what, d, c, stride ? " (T.StridedTensor)" : "", got);
  } else if (tl_rx_is_sym(prog, &s)) {
    const char *sn = sig->sym_names[s];
    if (!bound[s]) {
      if (got < 0 || (got > INT32_MAX && !(sig->sym_int64 && sig->sym_int64[s]))) {
        errf(b, nm, pos, TL_MSG_DIM_RANGE, what, d, stride ? "stride" : "dynamic dim", sn, got);
        return;
      }
      bound[s] = true;
      bound_by[s] = pi;
      bound_dim[s] = stride ? -1 - d : d;
      out->symv[s] = got;
    } else if (out->symv[s] != got) {
      int bd = bound_dim[s];
      errf(b, nm, pos, TL_MSG_DIM_BOUND, what, d, sn, out->symv[s], sig->params[bound_by[s]].name,
           bd < 0 ? "strides" : "shape", bd < 0 ? -1 - bd : bd, got);
    }
  }
}

/* T.StridedTensor parameter pi: each element stride of tensor t
 * (its strides array; NULL: compact) is the declared constant, or binds the
 * declared symbol.  Size-1 dims are not exempt: the kernel addresses with
 * the declared strides. */
static void check_strides(binder *b, int pi, size_t pos, const DLTensor *t, tl_rt_binding *out, bool *bound,
                          int *bound_by, int *bound_dim) {
  const tl_rt_param *p = &b->sig->params[pi];
  int64_t compact = 1;
  for (int d = p->ndim - 1; d >= 0; d--) {
    int64_t got = t->strides ? t->strides[d] : compact;
    compact *= t->shape[d] > 0 ? t->shape[d] : 1;
    bind_dim(b, pi, pos, &p->strides[d].prog, d, true, got, out, bound, bound_by, bound_dim);
  }
}

/* Checks one tensor argument; binds symbols from dims that are exactly a
 * symbol.  bound_by[s] records the parameter that bound symbol s. */
static void check_tensor(binder *b, int pi, size_t pos, const DLTensor *t, tl_rt_binding *out, bool *bound,
                         int *bound_by, int *bound_dim, int *dev_param) {
  const tl_rt_sig *sig = b->sig;
  const tl_rt_param *p = &sig->params[pi];
  const char *nm = p->name;
  /* device */
  if (b->cpu) {
    if (t->device.device_type != kDLCPU)
      errf(b, nm, pos, TL_MSG_DEVICE_TYPE, "cpu", dl_device_name(t->device.device_type));
  } else if (t->device.device_type != kDLCUDA && t->device.device_type != kDLCUDAManaged) {
    errf(b, nm, pos, TL_MSG_DEVICE_TYPE, "cuda", dl_device_name(t->device.device_type));
  } else if (!out->any_tensor) {
    out->any_tensor = true;
    out->device = t->device.device_id;
    *dev_param = pi;
  } else if (t->device.device_id != out->device) {
    errf(b, nm, pos, TL_MSG_DEVICE_ID, out->device, sig->params[*dev_param].name, t->device.device_id);
  }
  /* dtype */
  int per = 1;
  tl_dtype store = tl_dtype_storage(p->dtype, &per);
  if (!dtype_matches(p->dtype, t->dtype)) {
    char got[64], want[96];
    tl_rt_dl_dtype_text(t->dtype, got, sizeof got);
    snprintf(want, sizeof want, per > 1 ? "%s (the storage of %s: two values per byte)" : "%s", tl_dtype_name(store),
             tl_dtype_name(p->dtype));
    errf(b, nm, pos, TL_MSG_DTYPE, want, got);
  }
  /* ndim */
  if (t->ndim != p->ndim) {
    errf(b, nm, pos, TL_MSG_NDIM, p->ndim, t->ndim);
    return;
  }
  if (p->ndim > 0 && !t->shape) {
    errf(b, nm, pos, TL_MSG_NULL_SHAPE, p->ndim);
    return;
  }
  /* static dims and symbols */
  for (int d = 0; d < p->ndim; d++) {
    int64_t got = t->shape[d];
    if (got < 0) {
      errf(b, nm, pos, TL_MSG_NEG_DIM, d, got);
      continue;
    }
    int64_t c;
    if (per > 1 && d == p->ndim - 1 && tl_rx_is_const(&p->dims[d].prog, &c)) { /* int4: a constant even dim */
      char why[96];
      snprintf(why, sizeof why, " (%s dim %" PRId64 ", two values per byte of %s)", tl_dtype_name(p->dtype), c,
               tl_dtype_name(store));
      if (got * per != c) errf(b, nm, pos, TL_MSG_DIM_CONST, "shape", d, c / per, why, got);
      continue;
    }
    bind_dim(b, pi, pos, &p->dims[d].prog, d, false, got, out, bound, bound_by, bound_dim);
  }
  /* size and contiguity (T.StridedTensor: its strides, check_strides) */
  int64_t expect = 1;
  bool ok = true, overflow = false, empty = false;
  if (p->strides) check_strides(b, pi, pos, t, out, bound, bound_by, bound_dim);
  for (int d = p->ndim - 1; d >= 0; d--) {
    if (!p->strides && t->strides && t->shape[d] != 1 && t->strides[d] != expect) ok = false;
    if (__builtin_mul_overflow(expect, t->shape[d] < 0 ? 0 : t->shape[d], &expect)) overflow = true;
    empty |= t->shape[d] == 0;
  }
  int64_t nbytes;
  if (overflow || __builtin_mul_overflow(expect, (int64_t)tl_dtype_bytes(p->dtype), &nbytes)) {
    errf(b, nm, pos, TL_MSG_SIZE_OVERFLOW);
    return;
  }
  if (!ok) {
    tl_strbuf e = {0}, g = {0};
    tl_strbuf_append(&e, "[");
    tl_strbuf_append(&g, "[");
    int64_t acc = 1;
    int64_t *es = malloc(sizeof(int64_t) * (size_t)(p->ndim ? p->ndim : 1));
    if (es) {
      for (int d = p->ndim - 1; d >= 0; d--) {
        es[d] = acc;
        acc *= t->shape[d];
      }
      for (int d = 0; d < p->ndim; d++) {
        tl_strbuf_printf(&e, "%s%" PRId64, d ? ", " : "", es[d]);
        tl_strbuf_printf(&g, "%s%" PRId64, d ? ", " : "", t->strides[d]);
      }
      free(es);
    }
    tl_strbuf_append(&e, "]");
    tl_strbuf_append(&g, "]");
    errf(b, nm, pos, TL_MSG_STRIDES, e.data ? e.data : "", g.data ? g.data : "");
    tl_strbuf_free(&e);
    tl_strbuf_free(&g);
  }
  /* data (a tensor with no elements may have none) */
  if (!t->data && !empty) {
    errf(b, nm, pos, TL_MSG_NULL_DATA, b->cpu ? "host" : "device");
    return;
  }
  uintptr_t addr = (uintptr_t)t->data + (uintptr_t)t->byte_offset;
  int align = p->align > 0 ? p->align : 1;
  if (addr % (uintptr_t)align != 0) errf(b, nm, pos, TL_MSG_ALIGN, align, addr, t->data, (uint64_t)t->byte_offset);
  out->slots[pi] = (uint64_t)addr;
}

/* The launch configuration of a bound call: grid, block, shared memory.  A
 * grid dim of 0 where a dynamic dim is 0 is an empty call (as TileLang with
 * a zero-size tensor): nothing is launched, the outputs are empty.  Any other
 * grid dim out of range is an error that shows the dims' values. */
static void bind_launch(binder *b, const tl_rt_sig *sig, tl_rt_binding *out) {
  int ns = sig->nsyms;
  static const char *const axis[3] = {"x", "y", "z"};
  out->grid[0] = out->grid[1] = out->grid[2] = 1;
  int zero_sym = -1;
  tl_strbuf syms = {0};
  for (int s = 0; s < ns; s++) {
    if (out->symv[s] == 0 && zero_sym < 0) zero_sym = s;
    tl_strbuf_printf(&syms, "%s%s = %" PRId64 "%s", s ? ", " : " (with ", sig->sym_names[s], out->symv[s],
                     s == ns - 1 ? ")" : "");
  }
  for (int g = 0; g < sig->ngrid && g < 3; g++) {
    int64_t v;
    const char *why = NULL;
    bool ok = tl_rx_eval(&sig->grid[g], out->symv, out->scalarv, &v, &why);
    if (ok && v >= 1 && v <= INT32_MAX) {
      out->grid[g] = (unsigned)v;
      continue;
    }
    if (ok && v == 0 && zero_sym >= 0) { /* an empty call: nothing to launch */
      out->grid[g] = 0;
      out->empty = true;
      continue;
    }
    tl_strbuf e = {0}; /* the expression's text, for the message only */
    tl_rx_print(&e, &sig->grid[g], sig);
    if (!ok) errf(b, NULL, 0, TL_MSG_GRID_EVAL, axis[g], e.data ? e.data : "", why);
    else errf(b, NULL, 0, TL_MSG_GRID_RANGE, axis[g], e.data ? e.data : "", v, syms.data ? syms.data : "");
    tl_strbuf_free(&e);
  }
  tl_strbuf_free(&syms);
  {
    int64_t v;
    const char *why;
    if (!tl_rx_eval(&sig->threads, out->symv, out->scalarv, &v, &why)) errf(b, NULL, 0, TL_MSG_THREADS_EVAL, why);
    else if (v < 1 || v > 1024) errf(b, NULL, 0, TL_MSG_THREADS_RANGE, v);
    else out->block = (unsigned)v;
  }
  if (sig->smem_bytes < 0 || sig->smem_bytes > INT32_MAX) errf(b, NULL, 0, TL_MSG_SMEM_RANGE, sig->smem_bytes);
  else out->smem = (unsigned)sig->smem_bytes;
}

tl_status tl_rt_bind(tl_context *ctx, const tl_rt_sig *sig, const tl_arg *args, size_t nargs, tl_rt_binding *out) {
  return tl_rt_bind_on(ctx, sig, args, nargs, false, out);
}

bool tl_rt_binding_init(const tl_rt_sig *sig, tl_rt_binding *out, bool zero) {
  memset(out, 0, TL_RT_BINDING_HEAD);
  int np = sig->nparams, ns = sig->nsyms;
  out->nparams = np;
  out->has_outputs = sig->nout > 0;
  size_t nslots = (size_t)np + (size_t)ns;
  /* one zeroed block for every array, inside *out when it fits, else one
   * allocation (a call's host cost counts: the launch path aims at well
   * under a microsecond above cuLaunchKernel); all the
   * element types are 8 bytes or smaller, so 8-byte slices stay aligned */
  size_t n_s = (size_t)ns + 1, n_p = (size_t)np + 1, n_k = nslots + (size_t)sig->ntma + (size_t)sig->nws + 1;
  size_t words = n_s + n_p + n_k + n_k + n_p + n_p + 3 * n_s;
  uint64_t *mem = out->inline_words;
  if (words > TL_RT_BINDING_INLINE_WORDS) mem = calloc(words, sizeof(uint64_t));
  else if (zero) memset(mem, 0, words * sizeof(uint64_t));
  else memset(mem + n_s + n_p + n_k + n_k, 0, n_p * sizeof(uint64_t)); /* out_shapes */
  out->block_mem = mem;
  if (!mem) return false;
  uint64_t *q = mem;
  out->symv = (int64_t *)q, q += n_s;
  out->scalarv = (int64_t *)q, q += n_p;
  out->slots = q, q += n_k;
  out->kargs = (void **)q, q += n_k;
  out->out_shapes = (int64_t **)q, q += n_p;
  out->out_bytes = (size_t *)q, q += n_p;
  out->scratch = q;
  for (size_t i = 0; i < nslots; i++) out->kargs[i] = &out->slots[i];
  for (int i = 0; i < sig->nws; i++) out->kargs[nslots + (size_t)sig->ntma + (size_t)i] = &out->ws_ptr[i];
  return true;
}

tl_status tl_rt_bind_on(tl_context *ctx, const tl_rt_sig *sig, const tl_arg *args, size_t nargs, bool cpu,
                        tl_rt_binding *out) {
  binder b = {0};
  b.sig = sig;
  b.cpu = cpu;
  int np = sig->nparams, ns = sig->nsyms;
  tl_status st = TL_OK;
  if (!tl_rt_binding_init(sig, out, true)) {
    st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory binding kernel arguments");
    goto done;
  }
  size_t n_s = (size_t)ns + 1;
  bool *bound = (bool *)out->scratch;
  int *bound_by = (int *)(out->scratch + n_s), *bound_dim = (int *)(out->scratch + 2 * n_s);

  /* count */
  size_t want = (size_t)(np - sig->nout);
  if (nargs != want || (nargs > 0 && !args)) {
    tl_strbuf names = {0};
    for (int i = 0, k = 0; i < np; i++) {
      if (sig->params[i].is_output) continue;
      tl_strbuf_printf(&names, "%s%s", k++ ? ", " : "", sig->params[i].name);
    }
    errf(&b, NULL, 0, "argument count: expected %zu (%s%s), got %zu%s", want, names.data ? names.data : "",
         sig->nout ? "; out_idx outputs are not passed" : "", nargs,
         nargs > 0 && !args ? " with a NULL args array" : "");
    tl_strbuf_free(&names);
    goto report;
  }

  int dev_param = -1;
  size_t pos = 0;
  for (int pi = 0; pi < np; pi++) {
    const tl_rt_param *p = &sig->params[pi];
    if (p->is_output) continue;
    const tl_arg *a = &args[pos];
    if (p->is_tensor && p->unused && a->kind == TL_ARG_TENSOR && !a->v.tensor) {
      /* None for a tensor the kernel never touches: a null pointer (slot 0) */
    } else if (p->is_tensor) {
      if (a->kind != TL_ARG_TENSOR || !a->v.tensor) {
        tl_strbuf e = {0};
        tl_rt_param_shape_text(&e, p, sig);
        char kb[96];
        errf(&b, p->name, pos, TL_MSG_KIND_TENSOR, e.data ? e.data : "", arg_kind_text(a, kb, sizeof kb));
        tl_strbuf_free(&e);
      } else {
        check_tensor(&b, pi, pos, a->v.tensor, out, bound, bound_by, bound_dim, &dev_param);
      }
    } else {
      char why[160];
      if (!encode_scalar(p->dtype, a, &out->slots[pi], &out->scalarv[pi], why, sizeof why))
        errf(&b, p->name, pos, "%s", why);
    }
    pos++;
  }
  if (b.nerr) goto report;

  /* every symbol must be bound (outputs' symbols were checked at compile) */
  for (int s = 0; s < ns; s++)
    if (!bound[s]) errf(&b, NULL, 0, TL_MSG_UNBOUND_SYM, sig->sym_names[s], sig->sym_names[s]);
  if (b.nerr) goto report;

  /* dims that are expressions of symbols; output shapes */
  pos = 0;
  for (int pi = 0; pi < np; pi++) {
    const tl_rt_param *p = &sig->params[pi];
    if (!p->is_tensor) {
      pos++;
      continue;
    }
    int64_t *shape = NULL;
    if (!p->is_output && !args[pos].v.tensor) { /* an unused tensor passed as NULL */
      pos++;
      continue;
    }
    if (p->is_output) {
      shape = calloc((size_t)p->ndim + 1, sizeof(int64_t));
      if (!shape) {
        st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory binding kernel arguments");
        goto done;
      }
      out->out_shapes[pi] = shape;
    }
    uint64_t elems = 1;
    bool ovf = false;
    for (int d = 0; d < p->ndim; d++) {
      const tl_rx_prog *prog = &p->dims[d].prog;
      if (!p->is_output && (tl_rx_is_const(prog, NULL) || tl_rx_is_sym(prog, NULL))) continue;
      int64_t v;
      const char *why;
      if (!tl_rx_eval(prog, out->symv, out->scalarv, &v, &why)) {
        errf(&b, p->name, pos, TL_MSG_DIM_EVAL, d, why);
        continue;
      }
      if (p->is_output) {
        int per = 1;
        tl_dtype_storage(p->dtype, &per);
        if (d == p->ndim - 1) v /= per; /* int4: the storage's last dim (a constant even number) */
        if (v < 0) {
          tl_strbuf e = {0};
          tl_rx_print(&e, prog, sig);
          errf(&b, p->name, pos, TL_MSG_OUT_DIM_NEG, d, e.data ? e.data : "", v);
          tl_strbuf_free(&e);
        }
        shape[d] = v;
        if (v >= 0 && __builtin_mul_overflow(elems, (uint64_t)v, &elems)) ovf = true;
      } else {
        const DLTensor *t = args[pos].v.tensor;
        if (t->shape[d] != v) {
          tl_strbuf e = {0};
          tl_rx_print(&e, prog, sig);
          errf(&b, p->name, pos, TL_MSG_DIM_EXPR, d, e.data ? e.data : "", v, t->shape[d]);
          tl_strbuf_free(&e);
        }
      }
    }
    if (p->is_output) {
      uint64_t bytes;
      if (ovf ||
          __builtin_mul_overflow(elems, (uint64_t)tl_dtype_bytes(p->dtype) * (p->dtype.lanes ? p->dtype.lanes : 1),
                                 &bytes) ||
          bytes > SIZE_MAX)
        errf(&b, p->name, pos, TL_MSG_OUT_OVERFLOW);
      else out->out_bytes[pi] = (size_t)bytes;
    } else {
      pos++;
    }
  }
  if (b.nerr) goto report;

  bind_launch(&b, sig, out);
  /* dynamic symbols follow the parameters as int32 (int64 symbols as int64) */
  for (int s = 0; s < ns; s++)
    out->slots[np + s] = sig->sym_int64 && sig->sym_int64[s] ? (uint64_t)out->symv[s] : (uint32_t)(int32_t)out->symv[s];

report:
  if (b.nerr) {
    if (b.nerr > MAX_REPORTED) tl_strbuf_printf(&b.msg, TL_MSG_MORE_ERRORS, b.nerr - MAX_REPORTED);
    if (b.msg.oom) st = tl_context_fail(ctx, TL_ERR_NO_MEMORY, "out of memory");
    else st = tl_context_fail(ctx, TL_ERR_INVALID_ARGUMENT, "%s", b.msg.data ? b.msg.data : "");
  }
done:
  tl_strbuf_free(&b.msg);
  return st;
}
