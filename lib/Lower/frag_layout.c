/* Fragment layouts of lib/Lower: the maps and algebra that frag_layout.h
 * declares (it states where each map comes from), shared by layout
 * inference and the lowering. */
#include <stdint.h>
#include <string.h>

#include "Lower/frag_layout.h"

/* ------------------------------------------------- one mma.sync m16n8k16 */
/* docs/layouts.md (PTX ISA §9.7.14.5.8), lane = 4g + t:
 *   A 16 x 16: a0 = A[g][2t, 2t+1], a1 = A[g+8][2t, 2t+1],
 *              a2 = A[g][2t+8, 2t+9], a3 = A[g+8][2t+8, 2t+9];
 *   B 16 x 8:  b0 = B[2t, 2t+1][g], b1 = B[2t+8, 2t+9][g];
 *   C 16 x 8:  c0, c1 = C[g][2t, 2t+1], c2, c3 = C[g+8][2t, 2t+1]. */
void tl_mma_a_lane(int64_t r, int64_t c, int64_t *lane, int64_t *idx) {
  *lane = 4 * (r % 8) + (c % 8) / 2;
  *idx = 2 * (2 * (c / 8) + r / 8) + c % 2;
}

void tl_mma_b_lane(int64_t k, int64_t n, int64_t *lane, int64_t *idx) {
  *lane = 4 * n + (k % 8) / 2;
  *idx = 2 * (k / 8) + k % 2;
}

void tl_mma_c_lane(int64_t r, int64_t c, int64_t *lane, int64_t *idx) {
  *lane = 4 * (r % 8) + c / 2;
  *idx = 2 * (r / 8) + c % 2;
}

/* ------------------------------------------------------- warp partition */
bool tl_gemm_warp_partition(tl_module *m, int policy, int64_t bm, int64_t bn, int64_t nwarps, int64_t *warp_m,
                            int64_t *warp_n, const char **msg) {
  int64_t best_m = 0, best_n = 0;
  /* Square score |n - 2m| / m compared exactly as |n1-2m1|*m2 vs |n2-2m2|*m1. */
  for (int64_t wm = 1; nwarps > 0 && wm <= nwarps; wm++) {
    if (nwarps % wm != 0) continue;
    int64_t wn = nwarps / wm;
    if (bm % (16 * wm) != 0 || bn % (8 * wn) != 0) continue;
    if (!best_m) {
      best_m = wm, best_n = wn;
      continue;
    }
    switch (policy) {
    case TL_POLICY_FULL_ROW: best_m = wm, best_n = wn; break; /* increasing m */
    case TL_POLICY_FULL_COL: break;                           /* first = largest n */
    default: {
      int64_t a = wn - 2 * wm, b = best_n - 2 * best_m;
      if (a < 0) a = -a;
      if (b < 0) b = -b;
      if (a * best_m < b * wm) best_m = wm, best_n = wn; /* strict: ties keep smaller m */
      break;
    }
    }
  }
  if (best_m) {
    *warp_m = best_m;
    *warp_n = best_n;
    return true;
  }
  if (msg) {
    char *text = tl_arena_printf(
        &m->arena,
        "T.gemm cannot split the %lldx%lld accumulator tile over %lld warps (%lld threads): the rule is "
        "m * n = %lld warps with block_M %% (16 * m) == 0 and block_N %% (8 * n) == 0, and no (m, n) "
        "satisfies it:",
        (long long)bm, (long long)bn, (long long)nwarps, (long long)(nwarps * 32), (long long)nwarps);
    for (int64_t wm = 1; text && nwarps > 0 && wm <= nwarps; wm++) {
      if (nwarps % wm != 0) continue;
      int64_t wn = nwarps / wm;
      if (bm % (16 * wm) != 0)
        text = tl_arena_printf(&m->arena, "%s (%lld, %lld): %lld %% %lld = %lld;", text, (long long)wm, (long long)wn,
                               (long long)bm, (long long)(16 * wm), (long long)(bm % (16 * wm)));
      else
        text = tl_arena_printf(&m->arena, "%s (%lld, %lld): %lld %% %lld = %lld;", text, (long long)wm, (long long)wn,
                               (long long)bn, (long long)(8 * wn), (long long)(bn % (8 * wn)));
    }
    if (text) {
      size_t len = strlen(text);
      if (len && text[len - 1] == ';') text[len - 1] = '\0';
    }
    *msg = text;
  }
  return false;
}

/* --------------------------------------------------------- the C layout */
void tl_mma_c_layout_init(tl_frag_layout *L, int64_t bm, int64_t bn, int64_t threads, int64_t warp_m, int64_t warp_n) {
  L->kind = TL_FRAG_MMA_C;
  L->ndim = 2;
  L->shape[0] = bm;
  L->shape[1] = bn;
  L->total = bm * bn;
  L->threads = threads;
  L->vec = 2;
  L->nregs = threads > 0 ? bm * bn / threads : 0;
  L->nvec = L->nregs / 2;
  L->warp_m = warp_m;
  L->warp_n = warp_n;
  L->warp_tile_m = warp_m > 0 ? bm / warp_m : 0;
  L->warp_tile_n = warp_n > 0 ? bn / warp_n : 0;
  L->interleaved = false;
}

void tl_mma_c_owner(const tl_frag_layout *L, int64_t i, int64_t j, int64_t *tid, int64_t *reg) {
  int64_t WM = L->warp_tile_m, WN = L->warp_tile_n;
  int64_t wm = L->interleaved ? (i / 16) % L->warp_m : i / WM;
  int64_t mi = L->interleaved ? i / (16 * L->warp_m) : (i % WM) / 16;
  int64_t wn = j / WN, lane, c;
  tl_mma_c_lane(i % 16, j % 8, &lane, &c); /* m16n8 tile (mi, nj) of the warp tile */
  *tid = 32 * (wm + L->warp_m * wn) + lane;
  *reg = 4 * (mi * (WN / 8) + (j % WN) / 8) + c;
}

void tl_mma_c_coords(const tl_frag_layout *L, int64_t tid, int64_t reg, int64_t *i, int64_t *j) {
  int64_t WM = L->warp_tile_m, WN = L->warp_tile_n;
  int64_t e = reg % 2, h = (reg / 2) % 2, nj = (reg / 4) % (WN / 8), mi = reg / (WN / 2);
  int64_t w = tid / 32, wm = w % L->warp_m, wn = w / L->warp_m, g = (tid % 32) / 4, t = tid % 4;
  (void)WM;
  *i = tl_mma_c_row0(L, wm, mi) + 8 * h + g;
  *j = wn * WN + 8 * nj + 2 * t + e;
}

/* ------------------------------------------------------ the rs-form check */
bool tl_gemm_rs_a_check(const tl_frag_layout *A, int64_t warp_m, int64_t *bad_i, int64_t *bad_k) {
  if (!A || A->kind != TL_FRAG_MMA_C || A->ndim != 2 || A->warp_n != 1 || A->warp_m != warp_m || warp_m < 1)
    return false;
  int64_t BM = A->shape[0], K = A->shape[1];
  if (BM % (16 * warp_m) != 0 || K % 16 != 0) return false;
  int64_t WM = BM / warp_m;
  for (int64_t i = 0; i < BM; i++)
    for (int64_t k = 0; k < K; k++) {
      /* what the mma of warp i/WM expects: A slice (mi, kk) in registers 8 * (mi * (K/16) + kk) .. +7 */
      int64_t lane, a;
      tl_mma_a_lane(i % 16, k % 16, &lane, &a);
      int64_t want_tid = 32 * (i / WM) + lane;
      int64_t want_reg = 8 * (((i % WM) / 16) * (K / 16) + k / 16) + a;
      int64_t tid, reg;
      tl_mma_c_owner(A, i, k, &tid, &reg);
      if (tid != want_tid || reg != want_reg) {
        if (bad_i) *bad_i = i;
        if (bad_k) *bad_k = k;
        return false;
      }
    }
  return true;
}

/* -------------------------------------------------- row statistics */
static int64_t pow2_floor(int64_t x) {
  int64_t p = 1;
  while (p <= x / 2) p *= 2;
  return p;
}

bool tl_rows_group_ok(int64_t g) {
  if (g < 1) return false;
  return g >= 32 ? g % 32 == 0 : (g & (g - 1)) == 0;
}

int64_t tl_rows_groups(int64_t rows, int64_t cols, int64_t threads, int64_t vec) {
  if (rows < 1 || cols < 1 || threads < 1 || vec < 1) return 1;
  int64_t cv = cols / vec > 0 ? cols / vec : 1;
  int64_t g0 = pow2_floor(cv);
  if (g0 > 32) g0 = 32;
  int64_t G = 1;
  while (threads % (2 * G) == 0 && rows % (2 * G) == 0 && threads / (2 * G) >= g0 &&
         tl_rows_group_ok(threads / (2 * G)))
    G *= 2;
  return G;
}

void tl_rows_layout_init(tl_frag_layout *L, int ndim, int64_t rows, int64_t cols, int64_t threads, int64_t vec,
                         int64_t max_groups) {
  if (vec < 1) vec = 1;
  while (vec > 1 && cols % vec != 0) vec /= 2;
  int64_t G = tl_rows_groups(rows, cols, threads, vec);
  if (max_groups > 0)
    while (G > max_groups && G > 1) G /= 2;
  while (G > 1 && threads % G != 0) G /= 2;
  int64_t g = threads / G, cv = cols / vec;
  L->kind = TL_FRAG_ROWS;
  L->ndim = ndim;
  L->total = rows * cols;
  L->threads = threads;
  L->vec = vec;
  L->rows = rows;
  L->cols = cols;
  L->group = g;
  L->groups = G;
  L->cvg = (cv + g - 1) / g;
  L->rpt = (rows + G - 1) / G;
  L->nvec = L->rpt * L->cvg;
  L->nregs = L->nvec * vec;
  L->src = NULL;
}

bool tl_reducer_layout_init(tl_frag_layout *L, const tl_frag_layout *src, int ndim) {
  if (!src || (src->kind != TL_FRAG_MMA_C && src->kind != TL_FRAG_ROWS)) return false;
  L->kind = TL_FRAG_REDUCER;
  L->ndim = ndim;
  L->src = src;
  L->threads = src->threads;
  L->vec = 1;
  if (src->kind == TL_FRAG_MMA_C) {
    L->total = src->shape[0];
    L->nregs = src->warp_tile_m / 8;
  } else {
    L->total = src->rows;
    L->nregs = src->rpt;
  }
  L->nvec = L->nregs;
  return true;
}

bool tl_reducer_same(const tl_frag_layout *a, const tl_frag_layout *b) {
  if (!a || !b || a->kind != TL_FRAG_REDUCER || b->kind != TL_FRAG_REDUCER) return false;
  const tl_frag_layout *x = a->src, *y = b->src;
  if (x->kind != y->kind || x->threads != y->threads || a->total != b->total) return false;
  if (x->kind == TL_FRAG_MMA_C) return x->shape[0] == y->shape[0] && x->warp_m == y->warp_m;
  return x->rows == y->rows && x->groups == y->groups;
}

bool tl_reducer_fits(const tl_frag_layout *D, const tl_frag_layout *part) {
  if (!D || !part || D->kind != TL_FRAG_REDUCER || part->threads != D->threads) return false;
  const tl_frag_layout *s = D->src;
  if (part->kind == TL_FRAG_MMA_C && s->kind == TL_FRAG_MMA_C)
    return part->shape[0] == s->shape[0] && part->warp_m == s->warp_m;
  if (part->kind == TL_FRAG_ROWS && s->kind == TL_FRAG_ROWS) return part->rows == s->rows && part->groups == s->groups;
  return false;
}

bool tl_cols_layout_init(tl_frag_layout *L, const tl_frag_layout *src) {
  if (!src || src->kind != TL_FRAG_ROWS || src->ndim != 2) return false;
  L->kind = TL_FRAG_COLS;
  L->ndim = 1;
  L->src = src;
  L->threads = src->threads;
  L->vec = src->vec;
  L->total = src->cols;
  L->nvec = src->cvg;
  L->nregs = src->cvg * src->vec;
  return true;
}

bool tl_cols_fits(const tl_frag_layout *D, const tl_frag_layout *part) {
  return D && part && D->kind == TL_FRAG_COLS && tl_frag_layout_same(D->src, part);
}

/* COLS: the groups that hold rows of the source (min(G, R)). */
static int64_t cols_holder_groups(const tl_frag_layout *s) { return s->rows < s->groups ? s->rows : s->groups; }

bool tl_stacked_layout_init(tl_frag_layout *L, int ndim, const tl_frag_layout *B) {
  if (!B || B->kind == TL_FRAG_REPLICATED || B->kind == TL_FRAG_STACKED || ndim <= B->ndim) return false;
  int a = ndim - B->ndim;
  int64_t lead = 1;
  for (int k = 0; k < ndim; k++) {
    if (L->shape[k] < 1) return false;
    if (k < a) lead *= L->shape[k];
    else if (L->shape[k] != B->shape[k - a]) return false;
  }
  L->kind = TL_FRAG_STACKED;
  L->ndim = ndim;
  L->src = B;
  L->lead = lead;
  L->total = lead * B->total;
  L->threads = B->threads;
  L->vec = B->vec;
  L->nvec = lead * B->nvec;
  L->nregs = lead * B->nregs;
  return true;
}

bool tl_stacked_split_init(tl_frag_layout *L, int d, const tl_frag_layout *B) {
  if (!B || B->kind == TL_FRAG_REPLICATED || B->kind == TL_FRAG_STACKED || d < 0 || d >= B->ndim || B->ndim > 8)
    return false;
  for (int k = 0; k < B->ndim; k++)
    if (L->shape[k] < 1 || (k != d && L->shape[k] != B->shape[k]) || (k == d && L->shape[k] % B->shape[k]))
      return false;
  L->kind = TL_FRAG_STACKED;
  L->ndim = B->ndim;
  L->src = B;
  L->lead = L->shape[d] / B->shape[d];
  L->split = d + 1;
  L->total = L->lead * B->total;
  L->threads = B->threads;
  L->vec = B->vec;
  L->nvec = L->lead * B->nvec;
  L->nregs = L->lead * B->nregs;
  return true;
}

static int64_t flat_of(const tl_frag_layout *L, const int64_t *idx) {
  int64_t f = 0;
  for (int k = 0; k < L->ndim; k++) f = f * L->shape[k] + idx[k];
  return f;
}

static void unflat(const tl_frag_layout *L, int64_t f, int64_t *idx) {
  for (int k = L->ndim - 1; k >= 0; k--) {
    idx[k] = L->shape[k] > 0 ? f % L->shape[k] : 0;
    f = L->shape[k] > 0 ? f / L->shape[k] : 0;
  }
}

/* STACKED: the flat index l of the leading dims (the base's indices
 * follow), or along the split dim idx_d / S_d; *n: the base's indices
 * (pointing into idx, or into buf for a split). */
static int64_t stacked_lead(const tl_frag_layout *L, const int64_t *idx, int64_t *buf, const int64_t **n) {
  int64_t l = 0;
  if (L->split) {
    int d = L->split - 1;
    for (int k = 0; k < L->ndim; k++) buf[k] = idx[k];
    buf[d] = idx[d] % L->src->shape[d];
    *n = buf;
    return idx[d] / L->src->shape[d];
  }
  for (int k = 0; k < L->ndim - L->src->ndim; k++) l = l * L->shape[k] + idx[k];
  *n = idx + (L->ndim - L->src->ndim);
  return l;
}

void tl_frag_owner(const tl_frag_layout *L, const int64_t *idx, int64_t *tid, int64_t *reg) {
  int64_t f = flat_of(L, idx);
  switch (L->kind) {
  case TL_FRAG_STACKED: {
    int64_t buf[8];
    const int64_t *n;
    int64_t l = stacked_lead(L, idx, buf, &n);
    tl_frag_owner(L->src, n, tid, reg);
    *reg += l * L->src->nregs;
    return;
  }
  case TL_FRAG_PLAN:
    *tid = (f / L->vec) % L->threads;
    *reg = (f / (L->vec * L->threads)) * L->vec + f % L->vec;
    return;
  case TL_FRAG_REPLICATED:
    *tid = 0;
    *reg = f;
    return;
  case TL_FRAG_MMA_C: tl_mma_c_owner(L, idx[0], idx[1], tid, reg); return;
  case TL_FRAG_ROWS: {
    int64_t r = f / L->cols, c = f % L->cols, v = L->vec;
    *tid = (r % L->groups) * L->group + (c / v) % L->group;
    *reg = ((r / L->groups) * L->cvg + (c / v) / L->group) * v + c % v;
    return;
  }
  case TL_FRAG_COLS: {
    int64_t v = L->vec, g = L->src->group;
    *tid = (f / v) % g;
    *reg = ((f / v) / g) * v + f % v;
    return;
  }
  case TL_FRAG_REDUCER: {
    const tl_frag_layout *s = L->src;
    if (s->kind == TL_FRAG_MMA_C) {
      int64_t WM = s->warp_tile_m;
      *tid = 32 * (f / WM) + 4 * (f % 8);
      *reg = (f % WM) / 8;
    } else {
      *tid = (f % s->groups) * s->group;
      *reg = f / s->groups;
    }
    return;
  }
  }
}

bool tl_frag_holds(const tl_frag_layout *L, const int64_t *idx, int64_t tid, int64_t *reg) {
  int64_t t0, r0;
  tl_frag_owner(L, idx, &t0, &r0);
  *reg = r0;
  if (tid < 0 || tid >= L->threads) return L->kind == TL_FRAG_REPLICATED;
  if (L->kind == TL_FRAG_REPLICATED) return true;
  if (L->kind == TL_FRAG_STACKED) {
    int64_t rb, buf[8];
    const int64_t *n;
    stacked_lead(L, idx, buf, &n);
    return tl_frag_holds(L->src, n, tid, &rb);
  }
  int64_t f = flat_of(L, idx);
  const tl_frag_layout *s = L->src;
  if (L->kind == TL_FRAG_COLS) return tid / s->group < cols_holder_groups(s) && tid % s->group == t0;
  if (L->kind != TL_FRAG_REDUCER) return tid == t0;
  if (s->kind == TL_FRAG_MMA_C) return (tid / 32) % s->warp_m == f / s->warp_tile_m && (tid % 32) / 4 == f % 8;
  return tid / s->group == f % s->groups;
}

int64_t tl_frag_plan_vec(int64_t inner, int64_t total, int64_t threads, int bytes) {
  int64_t v = 16 / (bytes >= 1 && bytes <= 16 ? bytes : 16);
  while (v > 1 && (inner % v != 0 || total % v != 0)) v /= 2;
  while (v > 1 && total < threads * v) v /= 2;
  return v;
}

bool tl_frag_coords(const tl_frag_layout *L, int64_t tid, int64_t reg, int64_t *idx) {
  if (reg < 0 || reg >= L->nregs || tid < 0 || tid >= L->threads) return false;
  int64_t f;
  switch (L->kind) {
  case TL_FRAG_PLAN:
    f = (reg / L->vec) * L->vec * L->threads + tid * L->vec + reg % L->vec;
    if (f >= L->total) return false;
    break;
  case TL_FRAG_REPLICATED: return false;
  case TL_FRAG_STACKED: {
    int64_t nb = L->src->nregs, l = reg / nb;
    int a = L->ndim - L->src->ndim;
    if (!tl_frag_coords(L->src, tid, reg % nb, idx + a)) return false;
    if (L->split) {
      idx[L->split - 1] += l * L->src->shape[L->split - 1];
      return true;
    }
    for (int k = a - 1; k >= 0; k--) {
      idx[k] = l % L->shape[k];
      l /= L->shape[k];
    }
    return true;
  }
  case TL_FRAG_MMA_C: tl_mma_c_coords(L, tid, reg, &idx[0], &idx[1]); return true;
  case TL_FRAG_ROWS: {
    int64_t v = L->vec, q = reg / v;
    int64_t r = (q / L->cvg) * L->groups + tid / L->group;
    int64_t c = ((q % L->cvg) * L->group + tid % L->group) * v + reg % v;
    if (r >= L->rows || c >= L->cols) return false;
    f = r * L->cols + c;
    break;
  }
  case TL_FRAG_COLS: {
    int64_t v = L->vec, g = L->src->group;
    if (tid / g >= cols_holder_groups(L->src)) return false;
    f = ((reg / v) * g + tid % g) * v + reg % v;
    if (f >= L->total) return false;
    break;
  }
  case TL_FRAG_REDUCER: {
    const tl_frag_layout *s = L->src;
    if (s->kind == TL_FRAG_MMA_C) f = ((tid / 32) % s->warp_m) * s->warp_tile_m + 8 * reg + (tid % 32) / 4;
    else f = reg * s->groups + tid / s->group;
    if (f >= L->total) return false;
    break;
  }
  default: return false;
  }
  unflat(L, f, idx);
  return true;
}

bool tl_frag_layout_same(const tl_frag_layout *a, const tl_frag_layout *b) {
  if (a == b) return true;
  if (a->kind != b->kind || a->total != b->total || a->threads != b->threads || a->vec != b->vec) return false;
  if (a->kind == TL_FRAG_MMA_C)
    return a->warp_m == b->warp_m && a->warp_n == b->warp_n && a->shape[0] == b->shape[0] &&
           a->shape[1] == b->shape[1] && a->interleaved == b->interleaved;
  if (a->kind == TL_FRAG_ROWS) return a->rows == b->rows && a->cols == b->cols && a->groups == b->groups;
  if (a->kind == TL_FRAG_REDUCER) return tl_reducer_same(a, b);
  if (a->kind == TL_FRAG_COLS) return tl_frag_layout_same(a->src, b->src);
  if (a->kind == TL_FRAG_STACKED)
    return a->ndim == b->ndim && a->lead == b->lead && a->split == b->split && tl_frag_layout_same(a->src, b->src);
  return true;
}
