/* Unit tests of the TMA tensor copies (docs/simt-ir.md "TMA tensor
 * copies"): the CPU SIMT executor's shared image of T.ptx_tma_load byte for
 * byte against an independent formula (swizzle 0/32/64/128, a partial box
 * at the tensor's edge, negative coordinates), argument errors, the map
 * collector's order, and the runtime's encode arguments and map cache with
 * a mock encoder (no GPU needed). */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "IR/tir.h"
#include "Interp/interp.h"
#include "Runtime/kernel.h"
#include "tilelang/core.h"

#define R 37
#define C 72 /* uint16 rows of 144 bytes */

static tl_module *parse(const char *src, tl_diag *d) {
  tl_module *m = tl_module_new();
  tl_diag_init(d);
  if (!tl_frontend_parse(m, d, src, strlen(src), "tma.py", NULL, 0)) {
    tl_module_destroy(m);
    return NULL;
  }
  return m;
}

/* One block: thread 0 loads box (br, bc) at (c0, c1) of A with swizzle sw
 * into S (at shared offset 0), every thread waits and copies S raw to O. */
static char *kernel(int sw, int br, int bc, const char *c0, const char *c1) {
  static char buf[2048];
  int n = br * bc;
  snprintf(buf, sizeof buf,
           "import tilelang.language as T\n"
           "@T.prim_func\n"
           "def main(A: T.Tensor((%d, %d), \"uint16\"), O: T.Tensor((%d,), \"uint16\")):\n"
           "    with T.Kernel(1, threads=32) as b:\n"
           "        S = T.alloc_shared((%d,), \"uint16\")\n"
           "        bars = T.alloc_shared((1,), \"uint64\")\n"
           "        if T.get_thread_binding(0) == 0:\n"
           "            T.ptx_mbarrier_init(bars, 0, 1)\n"
           "        T.sync_threads()\n"
           "        if T.get_thread_binding(0) == 0:\n"
           "            T.ptx_mbarrier_arrive_expect_tx(bars, 0, %d)\n"
           "            T.ptx_tma_load(S, 0, bars, 0, A, %d, %d, %d, %s, %s)\n"
           "        T.ptx_mbarrier_wait(bars, 0, 0)\n"
           "        for i in T.serial(%d):\n"
           "            O[i * 32 + T.get_thread_binding(0)] = S[i * 32 + T.get_thread_binding(0)]\n",
           R, C, n, n, 2 * n, sw, br, bc, c0, c1, n / 32);
  return buf;
}

static uint16_t a_val(int i, int j) { return (uint16_t)(0x1000 + i * 256 + j); }

static uint16_t A[R * C];

/* The arguments (A, O) with O of n elements. */
static void set_args(tl_interp_arg *args, uint16_t *O, int n) {
  for (int i = 0; i < R; i++)
    for (int j = 0; j < C; j++) A[i * C + j] = a_val(i, j);
  memset(args, 0, 2 * sizeof *args);
  args[0].is_tensor = args[1].is_tensor = true;
  args[0].data = A;
  args[0].ndim = 2;
  args[0].shape[0] = R;
  args[0].shape[1] = C;
  args[1].data = O;
  args[1].ndim = 1;
  args[1].shape[0] = n;
}

/* Runs src on the SIMT executor (schedule seed) with O of n elements;
 * success, the diagnostics in *diag (malloc'd). */
static bool exec_src(const char *src, uint16_t *O, int n, uint64_t seed, char **diag) {
  tl_diag d;
  tl_module *m = parse(src, &d);
  bool ok = false;
  if (m) {
    tl_interp_arg args[2];
    set_args(args, O, n);
    tl_simt_options o = {.check_races = true, .schedule_seed = seed};
    ok = tl_simt_exec(m, 0, args, 2, NULL, 0, &o, &d);
    tl_module_destroy(m);
  }
  *diag = strdup(d.out.data ? d.out.data : "");
  tl_diag_free(&d);
  return ok;
}

/* Runs the kernel; O (br * bc elements) filled. */
static void run_box(int sw, int br, int bc, int c0, int c1, uint64_t seed, uint16_t *O) {
  char s0[16], s1[16], *diag;
  snprintf(s0, sizeof s0, "%d", c0);
  snprintf(s1, sizeof s1, "%d", c1);
  bool ok = exec_src(kernel(sw, br, bc, s0, s1), O, br * bc, seed, &diag);
  cr_assert(ok, "%s", diag);
  free(diag);
}

/* The independent formula: byte p of the image holds logical byte L with
 * p = L ^ (((L >> 7) & M) << 4) (the image starts at shared address 0);
 * logical byte L is byte L % 2 of box element L / 2, row-major over the box,
 * element (r, c) = A[c0 + r][c1 + c] or 0 outside A. */
static void check_box(int sw, int br, int bc, int c0, int c1) {
  int n = br * bc, mask = sw == 128 ? 7 : sw == 64 ? 3 : sw == 32 ? 1 : 0;
  uint16_t *O = calloc((size_t)n, 2);
  for (uint64_t seed = 0; seed < 3; seed++) {
    memset(O, 0xAB, (size_t)n * 2);
    run_box(sw, br, bc, c0, c1, seed, O);
    const uint8_t *ob = (const uint8_t *)O;
    for (int L = 0; L < 2 * n; L++) {
      int p = L ^ (((L >> 7) & mask) << 4);
      int e = L / 2, r = c0 + e / bc, c = c1 + e % bc;
      uint16_t v = r >= 0 && r < R && c >= 0 && c < C ? a_val(r, c) : 0;
      uint8_t want = (uint8_t)(L % 2 ? v >> 8 : v & 0xFF);
      cr_assert_eq(ob[p], want, "swizzle %d box %dx%d at (%d, %d), seed %llu: image byte %d = 0x%02x, want 0x%02x", sw,
                   br, bc, c0, c1, (unsigned long long)seed, p, ob[p], want);
    }
  }
  free(O);
}

Test(tma, image_swizzle_none) { check_box(0, 8, 24, 3, 8); }
Test(tma, image_swizzle_32) { check_box(32, 8, 16, 2, 8); }
Test(tma, image_swizzle_64) { check_box(64, 16, 32, 1, 16); }
Test(tma, image_swizzle_128) { check_box(128, 16, 64, 4, 0); }
Test(tma, image_edge_zero_fill) { check_box(128, 16, 64, 30, 40); }
Test(tma, image_negative_coordinates) { check_box(64, 8, 32, -3, -8); }
/* An innermost coordinate off the 16-byte grid faults on the H200 (docs/simt-ir.md): an error here. */
Test(tma, innermost_coordinate_off_16_bytes) {
  uint16_t O[8 * 32];
  char *diag;
  cr_expect_not(exec_src(kernel(64, 8, 32, "0", "5"), O, 8 * 32, 0, &diag));
  cr_expect(strstr(diag, "innermost coordinate 5 of tensor 'A' is 10 bytes from its row start, not a multiple of 16"),
            "%s", diag);
  free(diag);
}
Test(tma, image_whole_box_outside) { check_box(0, 8, 16, 50, -40); }

/* T.ptx_tma_store: S filled by ordinary stores with its own element index,
 * a proxy fence and a barrier, then thread 0 stores box (br, bc) at
 * (c0, c1) of A with swizzle sw.  Box element e lands at A[c0 + e / bc][c1 +
 * e % bc] when inside A and holds S's element at physical byte
 * p = L ^ (((L >> 7) & M) << 4), L = 2e, i.e. the value p / 2; the rest of A
 * is unchanged. */
static void check_store(int sw, int br, int bc, int c0, int c1) {
  int n = br * bc, mask = sw == 128 ? 7 : sw == 64 ? 3 : sw == 32 ? 1 : 0;
  char src[2048], *e;
  snprintf(src, sizeof src,
           "import tilelang.language as T\n"
           "@T.prim_func\n"
           "def main(A: T.Tensor((%d, %d), \"uint16\"), O: T.Tensor((%d,), \"uint16\")):\n"
           "    with T.Kernel(1, threads=32) as b:\n"
           "        S = T.alloc_shared((%d,), \"uint16\")\n"
           "        for i in T.serial(%d):\n"
           "            S[i * 32 + T.get_thread_binding(0)] = T.uint16(i * 32 + T.get_thread_binding(0))\n"
           "        T.ptx_fence_proxy_async()\n"
           "        T.sync_threads()\n"
           "        if T.get_thread_binding(0) == 0:\n"
           "            T.ptx_tma_store(A, S, 0, %d, %d, %d, %d, %d)\n"
           "            T.ptx_bulk_commit_group()\n"
           "            T.ptx_bulk_wait_group(0)\n",
           R, C, n, n, n / 32, sw, br, bc, c0, c1);
  uint16_t *O = calloc((size_t)n, 2);
  bool ok = exec_src(src, O, n, 0, &e);
  cr_assert(ok, "%s", e);
  free(e);
  for (int i = 0; i < R; i++)
    for (int j = 0; j < C; j++) {
      int r = i - c0, c = j - c1;
      uint16_t want = a_val(i, j);
      if (r >= 0 && r < br && c >= 0 && c < bc) {
        int L = 2 * (r * bc + c);
        want = (uint16_t)((L ^ (((L >> 7) & mask) << 4)) / 2);
      }
      cr_assert_eq(A[i * C + j], want, "store swizzle %d box %dx%d at (%d, %d): A[%d][%d] = %u, want %u", sw, br, bc,
                   c0, c1, i, j, A[i * C + j], want);
    }
  free(O);
}

Test(tma, store_swizzle_128_edge) { check_store(128, 16, 64, 25, 24); }
Test(tma, store_swizzle_64_negative) { check_store(64, 8, 32, -3, -8); }
Test(tma, store_swizzle_none) { check_store(0, 8, 24, 4, 8); }

Test(tma, argument_errors) {
  struct {
    int sw, br, bc;
    const char *want;
  } cases[] = {
      {48, 8, 16, "the swizzle must be a constant 0, 32, 64 or 128"},
      {0, 8, 12, "the inner box extent is 24 bytes, not a multiple of 16"},
      {32, 4, 32, "the inner box extent is 64 bytes, more than the 32-byte swizzle"},
      {0, 300, 8, "box extent 0 must be a constant from 1 to 256"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    static uint16_t O[300 * 8];
    char *e;
    cr_assert(!exec_src(kernel(cases[i].sw, cases[i].br, cases[i].bc, "0", "0"), O, cases[i].br * cases[i].bc, 0, &e));
    cr_assert(strstr(e, cases[i].want), "case %zu: diagnostics lack '%s':\n%s", i, cases[i].want, e);
    free(e);
  }
}

/* A read of the image without the mbarrier wait is a race naming the load;
 * an image that does not fit its buffer is an error. */
Test(tma, read_before_wait_races) {
  char src[2048], *e;
  static uint16_t O[128];
  const char *k = kernel(0, 8, 16, "0", "0");
  const char *w = "        T.ptx_mbarrier_wait(bars, 0, 0)\n";
  const char *p = strstr(k, w);
  cr_assert(p);
  /* a barrier instead of the wait: the copy lands (a scheduling point) but
   * bar.sync does not order the async proxy's writes */
  snprintf(src, sizeof src, "%.*s        T.sync_threads()\n%s", (int)(p - k), k, p + strlen(w));
  cr_assert(!exec_src(src, O, 128, 0, &e));
  cr_assert(strstr(e,
                   "data race on shared memory: thread 0 reads 'S'[0], written by the T.ptx_tma_load of thread 0 "
                   "before a wait observed its mbarrier 'bars'[0] complete phase 0"),
            "%s", e);
  free(e);
  const char *off = "T.ptx_tma_load(S, 0,";
  p = strstr(k, off);
  snprintf(src, sizeof src, "%.*sT.ptx_tma_load(S, 64,%s", (int)(p - k), k, p + strlen(off));
  cr_assert(!exec_src(src, O, 128, 0, &e));
  cr_assert(strstr(e, "T.ptx_tma_load: the 256-byte box image at 'S'[64] runs past the buffer's 256 bytes"), "%s", e);
  free(e);
}

Test(tma, stride_not_multiple_of_16) {
  /* the same kernel over uint8: rows of 72 bytes */
  char src[2048], *e;
  static uint16_t O[128];
  const char *k = kernel(0, 8, 16, "0", "0");
  size_t n = 0;
  for (const char *p = k; *p; p++) {
    if (strncmp(p, "uint16", 6) == 0) {
      n += (size_t)snprintf(src + n, sizeof src - n, "uint8");
      p += 5;
    } else {
      src[n++] = *p;
    }
  }
  src[n] = 0;
  cr_assert(!exec_src(src, O, 128, 0, &e));
  cr_assert(strstr(e, "T.ptx_tma_load: tensor 'A' has a stride of 72 bytes in dimension 0, not a multiple of 16"), "%s",
            e);
  free(e);
}

Test(tma, reference_evaluator_refuses) {
  tl_diag d;
  const char *src =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(A: T.Tensor((37, 72), \"uint16\"), O: T.Tensor((128,), \"uint16\")):\n"
      "    with T.Kernel(1, threads=32) as b:\n"
      "        S = T.alloc_shared((128,), \"uint16\")\n"
      "        bars = T.alloc_shared((1,), \"uint64\")\n"
      "        T.ptx_tma_load(S, 0, bars, 0, A, 0, 8, 16, 0, 0)\n";
  tl_module *m = parse(src, &d);
  cr_assert(m);
  static uint16_t O[128];
  tl_interp_arg args[2];
  set_args(args, O, 128);
  cr_assert(!tl_ref_eval(m, 0, args, 2, NULL, 0, &d));
  cr_assert(strstr(d.out.data, "T.ptx_tma_load is a SIMT-level intrinsic"), "%s", d.out.data);
  tl_diag_free(&d);
  tl_module_destroy(m);
}

Test(tma, collect_order_and_dedup) {
  const char *src =
      "import tilelang.language as T\n"
      "@T.prim_func\n"
      "def main(A: T.Tensor((64, 64), \"float16\"), B: T.Tensor((4, 64, 64), \"bfloat16\")):\n"
      "    with T.Kernel(1, threads=32) as b:\n"
      "        S = T.alloc_shared((8192,), \"float16\")\n"
      "        U = T.alloc_shared((8192,), \"bfloat16\")\n"
      "        bars = T.alloc_shared((1,), \"uint64\")\n"
      "        if T.get_thread_binding(0) == 0:\n"
      "            T.ptx_tma_load(U, 0, bars, 0, B, 64, 1, 8, 32, 0, 0, 0)\n"
      "            T.ptx_tma_load(S, 0, bars, 0, A, 128, 16, 64, 0, 0)\n"
      "            T.ptx_tma_load(S, 1024, bars, 0, A, 128, 16, 64, 16, 0)\n"
      "            T.ptx_tma_load(S, 0, bars, 0, A, 0, 16, 64, 0, 0)\n"
      "            T.ptx_tma_store(B, U, 0, 64, 1, 8, 32, 1, 2, 3)\n";
  tl_diag d;
  tl_module *m = parse(src, &d);
  cr_assert(m, "%s", d.out.data ? d.out.data : "");
  tl_tma_map *maps;
  tl_loc loc;
  char msg[256];
  int n = tl_tma_collect(m->funcs[0], &maps, &loc, msg, sizeof msg);
  cr_assert_eq(n, 3, "%d maps: %s", n, msg);
  cr_assert(maps[0].param == 1 && maps[0].rank == 3 && maps[0].swizzle == 64 && maps[0].box[0] == 1 &&
            maps[0].box[1] == 8 && maps[0].box[2] == 32);
  cr_assert(maps[1].param == 0 && maps[1].swizzle == 128 && maps[1].box[0] == 16 && maps[1].box[1] == 64);
  cr_assert(maps[2].param == 0 && maps[2].swizzle == 0);
  free(maps);
  tl_diag_free(&d);
  tl_module_destroy(m);
}

/* ------------------------------------------------------------ runtime */
static int mock_calls, mock_result;
static tl_rt_tma_encode mock_last;
static tl_CUresult mock_encode(void *map, int data_type, uint32_t rank, void *addr, const uint64_t *dims,
                               const uint64_t *strides, const uint32_t *box, const uint32_t *elem_strides,
                               int interleave, int swizzle, int l2, int oob) {
  mock_calls++;
  memset(&mock_last, 0, sizeof mock_last);
  mock_last.data_type = data_type;
  mock_last.rank = rank;
  mock_last.addr = (uint64_t)(uintptr_t)addr;
  memcpy(mock_last.dims, dims, sizeof(uint64_t) * rank);
  memcpy(mock_last.strides, strides, sizeof(uint64_t) * (rank - 1));
  memcpy(mock_last.box, box, sizeof(uint32_t) * rank);
  memcpy(mock_last.elem_strides, elem_strides, sizeof(uint32_t) * rank);
  mock_last.interleave = interleave;
  mock_last.swizzle = swizzle;
  mock_last.l2_promotion = l2;
  mock_last.oob_fill = oob;
  memset(map, 0x40 + mock_calls, 128);
  return mock_result;
}

static tl_rt_sig one_map_sig(tl_rt_param *p, tl_rt_tma *t) {
  tl_rt_sig s;
  memset(&s, 0, sizeof s);
  memset(p, 0, sizeof *p);
  p->name = "A";
  p->is_tensor = true;
  p->dtype = (tl_dtype){TL_TYPE_FLOAT, 16, 1};
  p->ndim = 3;
  *t = (tl_rt_tma){0, 3, {2, 16, 64}, 128};
  s.nparams = 1;
  s.params = p;
  s.ntma = 1;
  s.tma = t;
  return s;
}

Test(tma, encode_args) {
  tl_rt_param p;
  tl_rt_tma t;
  tl_rt_sig s = one_map_sig(&p, &t);
  int64_t shape[3] = {5, 100, 200};
  DLTensor dl = {.data = (void *)(uintptr_t)0x10000, .ndim = 3, .shape = shape, .byte_offset = 256};
  tl_rt_tma_key key;
  tl_rt_tma_encode e;
  const char *rule;
  cr_assert(tl_rt_tma_args(&t, &dl, p.dtype, 1, &key, &e, &rule));
  cr_assert_null(rule, "%s", rule);
  cr_assert(e.data_type == 6 && e.rank == 3 && e.addr == 0x10100);
  cr_assert(e.dims[0] == 200 && e.dims[1] == 100 && e.dims[2] == 5);
  cr_assert(e.strides[0] == 400 && e.strides[1] == 40000, "%llu %llu", (unsigned long long)e.strides[0],
            (unsigned long long)e.strides[1]);
  cr_assert(e.box[0] == 64 && e.box[1] == 16 && e.box[2] == 2);
  cr_assert(e.elem_strides[0] == 1 && e.elem_strides[1] == 1 && e.elem_strides[2] == 1);
  cr_assert(e.interleave == 0 && e.swizzle == 3 && e.l2_promotion == 2 && e.oob_fill == 0);
  cr_assert(key.device == 1 && key.strides[0] == 20000 && key.strides[2] == 1);
  shape[2] = 100; /* rows of 200 bytes */
  cr_assert(tl_rt_tma_args(&t, &dl, p.dtype, 1, &key, &e, &rule));
  cr_assert_str_eq(rule, "a stride is not a multiple of 16 bytes below 2^40");
  (void)s;
}

Test(tma, cache_encodes_once) {
  tl_rt_param p;
  tl_rt_tma t;
  tl_rt_sig s = one_map_sig(&p, &t);
  int64_t shape[3] = {5, 100, 200};
  DLTensor dl = {.data = (void *)(uintptr_t)0x10000, .ndim = 3, .shape = shape};
  const DLTensor *tens[1] = {&dl};
  tl_context *ctx;
  cr_assert_eq(tl_context_create(&ctx), TL_OK);
  tl_rt_tma_cache *c = tl_rt_tma_cache_new(1);
  uint8_t maps[128];
  mock_calls = 0;
  mock_result = 0;
  cr_assert_eq(tl_rt_tma_fill(ctx, &s, tens, 0, c, mock_encode, maps), TL_OK);
  cr_assert_eq(tl_rt_tma_fill(ctx, &s, tens, 0, c, mock_encode, maps), TL_OK);
  cr_assert_eq(mock_calls, 1);
  cr_assert_eq(c->encodes, 1);
  cr_assert_eq(maps[127], 0x41);
  cr_assert(mock_last.dims[0] == 200 && mock_last.swizzle == 3);
  dl.data = (void *)(uintptr_t)0x20000; /* another pointer: encoded again */
  cr_assert_eq(tl_rt_tma_fill(ctx, &s, tens, 0, c, mock_encode, maps), TL_OK);
  cr_assert_eq(mock_calls, 2);
  cr_assert_eq(maps[0], 0x42);
  cr_assert_eq(tl_rt_tma_fill(ctx, &s, tens, 1, c, mock_encode, maps), TL_OK); /* another device */
  cr_assert_eq(mock_calls, 3);
  shape[2] = 100;
  mock_result = TL_CUDA_ERROR_INVALID_VALUE;
  cr_assert_eq(tl_rt_tma_fill(ctx, &s, tens, 1, c, mock_encode, maps), TL_ERR_CUDA);
  const char *msg = tl_context_last_error(ctx);
  cr_assert(strstr(msg,
                   "tensor map #0 of argument 'A' (box 2x16x64, swizzle 128): cuTensorMapEncodeTiled failed: "
                   "CUDA_ERROR_INVALID_VALUE (a stride is not a multiple of 16 bytes below 2^40)"),
            "%s", msg);
  tl_rt_tma_cache_free(c);
  tl_context_destroy(ctx);
}
