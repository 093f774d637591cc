/* The state of pass "layout-inference" (layout_infer.c), shared with the
 * files that decide one family of layouts beside it (layout_cols.c: column
 * statistics).  Internal to the pass: its records of fragments, reduces and
 * statistic reads, and the union-find over fragment classes. */
#ifndef TL_LOWER_LAYOUT_INFER_H
#define TL_LOWER_LAYOUT_INFER_H

#include "Lower/frag_layout.h"
#include "Lower/lower_internal.h"

/* A kind of use of a fragment: whether there is one, where the first is and
 * what it is ("T.Parallel loop", "T.gemm", ...). */
typedef struct use_site {
  bool seen;
  tl_loc loc;
  const char *by;
} use_site;

typedef struct frag_info {
  tl_buffer *buf;
  int parent;
  int bytes;      /* largest element size seen by its class */
  use_site ident; /* indexed by the loop variables (gives a PLAN) */
  use_site other; /* any other use (makes it REPLICATED) */
  bool strong;    /* an identity use other than a T.copy / T.fill / T.clear of it alone */
  bool ident_mem; /* identity use in a T.Parallel that also stores to global or shared memory */
  /* T.gemm accumulator use (the first one) */
  bool gemm;
  tl_loc gemm_loc;
  int64_t gemm_m, gemm_n;
  bool gemm_wgmma; /* that gemm runs as wgmma (MMA_C interleaved when a warp has several m16 tiles) */
  bool gemm_as_a;  /* the use above is the A operand of an rs-form T.gemm */
  /* class root only: the gemm that decides the class's layout */
  int cls_gemm; /* frag index + 1 of the member holding it, 0: none */
  /* class root only (T.reduce): */
  bool rows;       /* the ROWS layout (reduced along its last dim, or rows read by statistics) */
  int64_t rows_G;  /* its group count (unified with the classes it shares statistics with) */
  bool red_cls;    /* row statistics: the REDUCER layout of a reduce source or linked rows */
  bool col_cls;    /* column statistics: the COLS layout of a dim-0 reduce's source (finish_cols) */
  bool repl_cls;   /* every member REPLICATED (replicate(), replicate_statistics()) */
  int64_t threads; /* the threads of the region that uses it (a thread-range scope's, else the block's) */
} frag_info;

/* A T.reduce_*: src / dst fragment index or -1; a shared source
 * of a fragment destination gets a virtual ROWS partition (virt). */
typedef struct red_rec {
  int src, dst;
  int rdim, sn;
  int64_t R, C;
  bool src_shared;
  bool dst_multi; /* the destination has more than one dim of extent > 1 */
  bool cols;      /* a 2-D fragment reduced along dim 0 into column statistics read beside it (COLS) */
  tl_frag_layout *virt;
  int64_t threads; /* the threads that run it */
  tl_loc loc;
  const char *by;
} red_rec;

/* A row statistic D[i] read in a 2-D T.Parallel loop whose identity
 * fragment (the loop's partition) is f (-1: none). */
typedef struct row_link {
  int d, f;
  tl_loc loc;
  int split; /* stacked reads: 0, or d + 1 for F[.., l*S + n, ..] along dim d (tl_lo_split_access) */
} row_link;

typedef struct li_state {
  tl_module *m;
  tl_diag *d;
  int errors;
  int64_t threads;
  TL_VEC(frag_info) frags;
  tl_map index; /* buffer → index + 1 */
  bool oom;
  /* the T.Parallel being scanned */
  const tl_stmt *loop;
  int loop_bytes;
  bool loop_mem; /* the loop stores to global or shared memory */
  bool storing;  /* the access being scanned is a store's target */
  TL_VEC(int) loop_ident;
  TL_VEC(int) loop_rows;   /* row statistics read by the loop: D[i] */
  TL_VEC(int) loop_cols;   /* column statistics read by a 2-D loop: D[j] */
  TL_VEC(int) loop_stack;  /* stacked fragments read by the loop: F[l, j] */
  TL_VEC(int) loop_split;  /* per loop_stack entry: its row_link.split */
  TL_VEC(row_link) stacks; /* stacked reads: F (d) on the threads of the partition f (resolve_stacks) */
  TL_VEC(red_rec) reds;
  TL_VEC(row_link) links;
  TL_VEC(row_link) col_links;    /* D[j] read by a 2-D loop over (i, j) partitioned by f (decide_cols) */
  TL_VEC(row_link) loop_rstores; /* stores D[i] of row statistics in the loop being scanned (loc: the store) */
  TL_VEC(row_link) row_stores;   /* those of every loop, f its partition (layout_row_stores.c) */
  tl_map swizzled;               /* shared buffers given a gemm swizzle by this pass */
  TL_VEC(int) copy_links;        /* fragment → fragment T.copy pairs (a, b), joined after the scan */
} li_state;

/* The class root of fragment i (union-find). */
int tl_li_find(li_state *st, int i);
/* Records an irregular use of fragment i (REPLICATED, or a conflict). */
void tl_li_use_other(li_state *st, int i, tl_loc loc, const char *by);
/* layout_cols.c: which dim-0 reduces make column statistics (before the
 * rows are decided), and their COLS layouts (after the sources have theirs). */
void tl_li_decide_cols(li_state *st);
void tl_li_finish_cols(li_state *st);
/* layout_row_stores.c: stores D[i] of row statistics in loops over (i, j)
 * (after every layout is decided). */
void tl_li_check_row_stores(li_state *st);

#endif
