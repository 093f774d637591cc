/* Fragment layouts of lib/Lower (internal): how a local.fragment buffer's
 * elements are spread over a block's threads and their registers.  Layout
 * inference (layout_infer.c) chooses and attaches them (tl_buffer.layout);
 * the lowering (lower_tile.c, lower_gemm.c, lower_frag.c, lower_reduce.c)
 * reads them; both call this module (frag_layout.c) for the maps and their
 * algebra, and nothing here depends on a lowering file.
 *
 * Where each map comes from:
 *   - PLAN, REPLICATED: this compiler's own partitions (docs/layouts.md
 *     "Fragment kinds"): consecutive vectors round-robin over the threads, or every thread
 *     holding everything;
 *   - the mma.sync m16n8k16 A, B and C (accumulator) fragments of one warp
 *     (tl_mma_a_lane, tl_mma_b_lane, tl_mma_c_lane): PTX ISA §9.7.14.5.8,
 *     figures "MMA .m16n8k16 fragment layout for matrix A / B /
 *     accumulator", as restated and verified on a GPU in
 *     docs/layouts.md "mma.sync fragments of one warp";
 *   - MMA_C, the accumulator of a whole block tile split over warps, and
 *     the warp partition that decides the split (tl_gemm_warp_partition,
 *     TileLang's ComputeDefaultWarpPartition): docs/layouts.md;
 *   - the rs-form identity "an MMA_C fragment split only along M is the A
 *     operand of the next mma" (tl_gemm_rs_a_check): docs/layouts.md "P·V
 *     reuse", checked element by element with the A and C maps above;
 *   - ROWS and REDUCER, the row-statistics layouts of T.reduce_* and their
 *     algebra (tl_rows_*, tl_reducer_*): docs/layouts.md "Row statistics" and
 *     "Reductions".
 * Another hardware accumulator (Hopper's wgmma m64nNk16, docs/hopper.md: warp w
 * of a warpgroup owns rows 16w..16w+15, the mma.sync C map repeated per 8
 * columns) goes in beside MMA_C: a tl_frag_kind, its record fields, an init
 * function, and its cases in tl_frag_owner / tl_frag_holds / tl_frag_coords
 * (the dispatch over kinds that every user goes through). */
#ifndef TL_FRAG_LAYOUT_H
#define TL_FRAG_LAYOUT_H

#include "IR/tir.h"

/* PLAN: the fragment (static shape S, E elements, row-major flat index f) is
 * spread over `threads` threads in vectors of `vec` consecutive elements:
 *     thread(f) = (f / vec) % threads
 *     reg(f)    = (f / (vec * threads)) * vec + f % vec
 * Each thread holds nregs = nvec * vec registers, nvec = ceil(E / (vec*threads));
 * the inverse is f = (r / vec) * vec * threads + tid * vec + r % vec, valid iff
 * f < E (vec divides E, so a vector is wholly valid or wholly idle).
 * REPLICATED: every thread holds all E elements; reg(f) = f. */
typedef enum {
  TL_FRAG_PLAN,
  TL_FRAG_REPLICATED,
  TL_FRAG_MMA_C,
  TL_FRAG_ROWS,
  TL_FRAG_REDUCER,
  TL_FRAG_STACKED,
  TL_FRAG_COLS
} tl_frag_kind;
/* MMA_C: the mma.sync m16n8 accumulator layout of a 2-D [BM, BN] T.gemm C
 * fragment over `threads` threads split into warp_m x warp_n warps (warp tile
 * WM x WN = warp_tile_m x warp_tile_n; docs/layouts.md):
 *     tid = 32*(i/WM + warp_m*(j/WN)) + 4*(i%8) + (j%8)/2
 *     reg = 4*(((i%WM)/16)*(WN/8) + (j%WN)/8) + 2*((i/8)%2) + j%2
 * vec = 2 (registers 2q, 2q+1 are columns j, j+1), nregs = BM*BN/threads.
 * tl_mma_c_coords is the inverse.
 * ROWS (a block of rows that is reduced along its last dim and that
 * no gemm feeds): the fragment is viewed as R x C (R = product of the leading
 * dims, C = the last dim, cv = C / vec column vectors per row); the threads
 * form G = groups groups of g = group = threads / G consecutive threads
 * (g <= 32 a power of two, else a multiple of 32: whole warps), row r
 * belongs to group r % G and its column vectors go round-robin over the g
 * threads of the group:
 *     tid = (r % G)*g + (c/vec) % g
 *     reg = ((r / G)*cvg + (c/vec) / g)*vec + c % vec
 * with rpt = ceil(R / G) rows and cvg = ceil(cv / g) vectors per row per
 * thread: nvec = rpt*cvg, nregs = nvec*vec.  Inverse of (tid, reg):
 * r = (reg/vec / cvg)*G + tid/g, c = ((reg/vec % cvg)*g + tid%g)*vec +
 * reg%vec, valid iff r < R and c < C.  A row reduction combines the g
 * threads of a group: shuffles inside a warp, shared memory across warps.
 * REDUCER ("reducer-of", docs/layouts.md "Row statistics"): the row statistics of a
 * 2-D MMA_C or ROWS layout `src` reduced along its last dim: shape (R,) or
 * (R, 1); element i is held, in the same register, by every thread that
 * holds an element of row i of src (replicated over them):
 *   src MMA_C: reg = (i % WM)/8 (nregs = WM/8), owners
 *              32*(i/WM + warp_m*wn) + 4*(i%8) + t for wn < warp_n, t < 4;
 *              C register q of row i pairs with statistic 2*(q/(WN/2)) + (q/2)%2;
 *              inverse: i = ((tid/32) % warp_m)*WM + 8*reg + (tid%32)/4.
 *   src ROWS:  reg = i / G (nregs = rpt), owners (i % G)*g + [0, g);
 *              inverse: i = reg*G + tid/g (valid iff i < R).
 * Replica 0 of an element (the thread that stores it to memory) is, for
 * MMA_C, the one with tid%4 == 0 and wn == 0; for ROWS tid%g == 0.
 * STACKED (docs/layouts.md "Stacked fragments"): a fragment [L..., S...]
 * whose trailing dims S are the shape of a distributed base layout B (src;
 * PLAN, ROWS, MMA_C or REDUCER) and whose leading dims (lead = their
 * product, l their row-major flat index) repeat it: element (l, n) is held
 * by every thread that holds B[n], in register
 *     reg = l * B.nregs + reg_B(n)          (nregs = lead * B.nregs)
 * so a loop partitioned by B reads F[l, n] at its iteration n on its own
 * thread (TileLang's split-KV combine: lse[k, j] read by T.Parallel(N)
 * under a serial k).  Replica 0 is B's.  Inverse: l = reg / B.nregs,
 * n = coords_B(tid, reg % B.nregs).
 * STACKED along a split dim (split = d + 1): a fragment of B's rank whose
 * dim d is lead times B's (the others B's), read as F[.., l*S_d + n_d, ..]
 * beside B[.., n_d, ..] (TileLang's mHC sum of squares: x[i, jj*4 + j] in
 * T.Parallel(R, 4) under a serial jj): element idx is held by every thread
 * that holds B[n], n = idx with n_d = idx_d % S_d, in register
 * (idx_d / S_d) * B.nregs + reg_B(n); inverse as above with idx_d = l*S_d + n_d.
 * COLS ("column statistics", docs/layouts.md "Column statistics"): the
 * statistics of a 2-D ROWS layout `src` (R x C, G groups of g threads, vec,
 * cvg) reduced along dim 0: shape (C,); element c is held, in the same
 * register, by every thread that holds an element of column c of src (one
 * thread in each of the H = min(G, R) groups that hold rows), replicated
 * over them:
 *     holders h*g + (c/vec) % g for h < H,   reg = ((c/vec) / g)*vec + c % vec
 * (nregs = cvg*vec: a ROWS register (a*cvg + b)*vec + e of src is column
 * register b*vec + e, i.e. reg_src % (cvg*vec)).  Replica 0 is group 0's.
 * Inverse: c = ((reg/vec)*g + tid%g)*vec + reg%vec, valid iff tid/g < H and
 * c < C.
 * tl_frag_owner / tl_frag_coords below implement every kind. */

typedef struct tl_frag_layout {
  tl_frag_kind kind;
  int ndim;
  int64_t *shape;                                   /* the fragment's original static shape */
  int64_t total;                                    /* E */
  int64_t threads, vec;                             /* PLAN only (REPLICATED: threads 1, vec 1) */
  int64_t nvec, nregs;                              /* per-thread vectors / registers */
  int64_t warp_m, warp_n, warp_tile_m, warp_tile_n; /* MMA_C only */
  /* MMA_C only: the wgmma accumulator of a warpgroup that runs several m64
   * instructions (warp_specialize.c / lower_gemm.c).  Warp wm's m16 tile mi
   * is then rows 16*(mi*warp_m + wm) .. +15 (m64 instruction mi covers rows
   * 16*warp_m*mi + 64*(warpgroup's M index) .. +63, warp w of it 16 rows
   * each, as wgmma's map requires) instead of the contiguous wm*WM + 16*mi
   * (tl_mma_c_row0).  Registers are numbered as in the contiguous case. */
  bool interleaved;
  int64_t rows, cols, group, groups, rpt, cvg; /* ROWS only: R, C, g, G, rpt, cvg */
  const struct tl_frag_layout *src;            /* REDUCER, COLS: the 2-D layout reduced; STACKED: the base */
  int64_t lead;                                /* STACKED only: product of the leading dims */
  int split;                                   /* STACKED only: 0 (leading dims), or d + 1: dim d split */
  tl_loc set_at;                               /* the op that decided the layout */
  const char *set_by;                          /* its spelling, e.g. "T.Parallel" */
} tl_frag_layout;

static inline tl_frag_layout *tl_frag_layout_of(const tl_buffer *b) {
  return b && b->scope == TL_SCOPE_FRAGMENT ? (tl_frag_layout *)b->layout : NULL;
}

/* Layout maps, for every kind.  idx has L->ndim entries.
 * tl_frag_owner: the thread of replica 0 of element idx and its register.
 * tl_frag_holds: does thread tid hold element idx (any replica)?  Sets *reg.
 * tl_frag_coords: the element (idx, L->ndim entries) in register reg of
 * thread tid; false when that slot holds nothing (padding) or the layout is
 * REPLICATED. */
void tl_frag_owner(const tl_frag_layout *L, const int64_t *idx, int64_t *tid, int64_t *reg);
bool tl_frag_holds(const tl_frag_layout *L, const int64_t *idx, int64_t tid, int64_t *reg);
bool tl_frag_coords(const tl_frag_layout *L, int64_t tid, int64_t reg, int64_t *idx);

/* The vector width of a PLAN partition of `total` elements of `bytes` bytes
 * (last dimension `inner` long) over `threads` threads: the widest power of
 * two of at most 16 bytes that divides inner and total and still leaves
 * every thread a whole vector (1 when none).  Layout inference uses it for
 * PLAN fragments, tile lowering for T.Parallel loops over memory. */
int64_t tl_frag_plan_vec(int64_t inner, int64_t total, int64_t threads, int bytes);

/* ------------------------------------------------- one mma.sync m16n8k16 */
/* The lane and the 16-bit half-register index (register idx/2, half idx%2)
 * of element (r, c) of one warp's A tile (16 x 16, M x K): idx/2 = a0..a3.
 * r in [0, 16), c in [0, 16). */
void tl_mma_a_lane(int64_t r, int64_t c, int64_t *lane, int64_t *idx);
/* The same for B (16 x 8, K x N): element (k, n), idx/2 = b0, b1. */
void tl_mma_b_lane(int64_t k, int64_t n, int64_t *lane, int64_t *idx);
/* The same for the accumulator C (16 x 8): element (r, c) is c<idx> of the
 * lane, idx in [0, 4). */
void tl_mma_c_lane(int64_t r, int64_t c, int64_t *lane, int64_t *idx);

/* ------------------------------------------------ T.gemm block layouts */
/* Chooses (warp_m, warp_n) for a BM x BN accumulator over nwarps warps by
 * policy (TL_POLICY_*); false when no pair covers the tile exactly.  When
 * msg is non-NULL and the result is false, *msg is an arena string stating
 * the rule and the numbers. */
bool tl_gemm_warp_partition(tl_module *m, int policy, int64_t bm, int64_t bn, int64_t nwarps, int64_t *warp_m,
                            int64_t *warp_n, const char **msg);
/* Fills L as the MMA_C layout of a [bm, bn] fragment (L->shape allocated by
 * the caller with 2 entries). */
/* MMA_C: the first row of warp wm's m16 tile mi (see interleaved). */
static inline int64_t tl_mma_c_row0(const tl_frag_layout *L, int64_t wm, int64_t mi) {
  return L->interleaved ? 16 * (mi * L->warp_m + wm) : wm * L->warp_tile_m + 16 * mi;
}
void tl_mma_c_layout_init(tl_frag_layout *L, int64_t bm, int64_t bn, int64_t threads, int64_t warp_m, int64_t warp_n);
/* Forward map of an MMA_C layout: element (i, j) → (thread, register). */
void tl_mma_c_owner(const tl_frag_layout *L, int64_t i, int64_t j, int64_t *tid, int64_t *reg);
/* Inverse: (thread, register) → element (i, j). */
void tl_mma_c_coords(const tl_frag_layout *L, int64_t tid, int64_t reg, int64_t *i, int64_t *j);
/* The rs form of T.gemm (A in a fragment, lower_frag.c): true when every
 * element (i, k) of the BM x K MMA_C fragment A sits in the thread and
 * register where mma.sync m16n8k16 run by a gemm with warp partition
 * warp_m x 1 reads it (registers 8*(mi*(K/16) + kk) .. +7 = a0..a3 of slice
 * (mi, kk)); false otherwise, with the first element that differs in
 * *bad_i, *bad_k (left unchanged when A is not such a layout at all). */
bool tl_gemm_rs_a_check(const tl_frag_layout *A, int64_t warp_m, int64_t *bad_i, int64_t *bad_k);

/* -------------------------------------------------- row statistics */
/* Can a group of g lanes be combined by xor shuffles (g <= 32 a power of
 * two) or is it made of whole warps? */
bool tl_rows_group_ok(int64_t g);
/* Fills L (L->shape: ndim entries set by the caller, product R*C) as the
 * ROWS layout of an R x C block over `threads` threads with vector width vec
 * (halved until it divides C) and G = min(tl_rows_groups(...), max_groups)
 * groups (max_groups 0: no limit; G is reduced until it divides threads). */
void tl_rows_layout_init(tl_frag_layout *L, int ndim, int64_t rows, int64_t cols, int64_t threads, int64_t vec,
                         int64_t max_groups);
/* The preferred group count: the largest power of two G dividing R and
 * threads with threads/G >= min(32, cv') (cv' = cv rounded down to a power
 * of two), so that a row is a warp or more, or a group of at least cv lanes
 * when the row has fewer than 32 vectors. */
int64_t tl_rows_groups(int64_t rows, int64_t cols, int64_t threads, int64_t vec);
/* Fills L (L->shape allocated by the caller with ndim entries: (R,) or
 * (R, 1)) as the REDUCER layout of src (MMA_C or ROWS) reduced along its
 * last dim; false when src is of another kind. */
bool tl_reducer_layout_init(tl_frag_layout *L, const tl_frag_layout *src, int ndim);
/* Do two REDUCER layouts put every element in the same threads and
 * register?  (Same src kind and R, and the same warp_m / G.) */
bool tl_reducer_same(const tl_frag_layout *a, const tl_frag_layout *b);
/* May a T.Parallel loop partitioned by the 2-D layout part (MMA_C or ROWS)
 * read the statistic D[i] (D REDUCER) at every element (i, j)?  True when
 * the thread running (i, j) holds D[i], in register
 *   MMA_C part: 2*mi + h (the partition's m-tile and half),
 *   ROWS part:  the partition's row iteration r / G. */
bool tl_reducer_fits(const tl_frag_layout *D, const tl_frag_layout *part);

/* Fills L (L->shape: 1 entry, set by the caller) as the COLS layout of src
 * (a 2-D ROWS layout) reduced along dim 0; false when src is not one. */
bool tl_cols_layout_init(tl_frag_layout *L, const tl_frag_layout *src);
/* May a T.Parallel loop partitioned by the 2-D layout part read the column
 * statistic D[c] (D COLS) at every element (r, c)?  True when part is D's
 * source layout: the thread running (r, c) holds D[c], in register
 * reg_part % D.nregs. */
bool tl_cols_fits(const tl_frag_layout *D, const tl_frag_layout *part);

/* Fills L (L->shape: ndim entries set by the caller) as the STACKED layout
 * of base B repeated over the leading ndim - B->ndim dims; false when the
 * trailing dims are not B's shape or B is not distributed. */
bool tl_stacked_layout_init(tl_frag_layout *L, int ndim, const tl_frag_layout *B);
/* ... and as the STACKED layout along split dim d (frag layout of B's
 * rank, L->shape[d] a multiple of B's); false when the shapes do not fit. */
bool tl_stacked_split_init(tl_frag_layout *L, int d, const tl_frag_layout *B);

/* Do two distributed fragment layouts put every element in the same
 * (thread, register)? */
bool tl_frag_layout_same(const tl_frag_layout *a, const tl_frag_layout *b);

#endif
