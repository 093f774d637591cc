/* The prelude: compile-time Python of this compiler that stands for the
 * Python helpers TileLang kernels import from tilelang.cuda.intrinsics
 * (TensorCoreIntrinEmitter, get_swizzle_layout).  TileLang builds them
 * from TVM objects in Python; here they are written in the subset the
 * elaborator runs (functions, @T.macro), parsed once per elaboration as
 * the file "<tilelang.cuda.intrinsics>" and bound where a kernel file
 * imports one of their names (module_value in elaborate.c).
 *
 * TensorCoreIntrinEmitter(...) returns an object (a dict whose keys are
 * attributes: __tl_object__) whose methods expand, inside the kernel, to
 * what the front end already lowers: ldmatrix_a / ldmatrix_b as per-thread
 * loads of the mma.sync m16n8k16 A and B fragments from a 2-D shared
 * buffer (each thread the elements ldmatrix.x4 would give it:
 * docs/layouts.md "mma.sync fragments of one warp"), mma as T.ptx_mma on
 * the local fragments (two per 16 columns), stmatrix as per-thread stores
 * of the C fragment.  Only 16-bit operands (float16 / bfloat16: m16n8k16)
 * and local (T.alloc_local) fragments are taken; anything else stops at an
 * assert of the prelude with its message, noted at the kernel's call. */
#include <string.h>

#include "Frontend/elab_impl.h"

#define PRELUDE_FILE "<tilelang.cuda.intrinsics>"

static const char prelude_src[] =
    "import tilelang.language as T\n"
    "from tvm import DataType\n"
    "\n"
    "\n"
    "def get_swizzle_layout(row_idx, col_idx, row_size, dtype, swizzle_bytes=None):\n"
    "    bits = DataType(dtype).bits\n"
    "    row_bytes = bits * row_size // 8\n"
    "    assert row_bytes % 32 == 0, 'get_swizzle_layout: a row must be a multiple of 32 bytes'\n"
    "    if swizzle_bytes is None:\n"
    "        swizzle_bytes = min(128, row_bytes)\n"
    "    per16 = 128 // bits\n"
    "    vecs = swizzle_bytes // 16\n"
    "    chunk = col_idx // per16\n"
    "    return (chunk // vecs, row_idx,\n"
    "            (chunk % vecs ^ row_idx % 8 // (8 // vecs)) * per16 + col_idx % per16)\n"
    "\n"
    "\n"
    "def _frag_mk(lane, j):\n"
    "    return lane // 4 + 8 * (j % 4 // 2), lane % 4 * 2 + j % 2 + 8 * (j // 4)\n"
    "\n"
    "\n"
    "def _frag_nk(lane, j):\n"
    "    return lane // 4 + 8 * (j // 4), lane % 4 * 2 + j % 2 + 8 * (j % 4 // 2)\n"
    "\n"
    "\n"
    "def _check_local(buf, what):\n"
    "    assert __tl_scope__(buf) == 'local', \\\n"
    "        'TensorCoreIntrinEmitter: ' + what + ' must be a T.alloc_local buffer (fragments are not supported yet)'\n"
    "\n"
    "\n"
    "def _check_shared(buf, what):\n"
    "    assert __tl_scope__(buf) in ('shared', 'shared.dyn') and len(buf.shape) == 2, \\\n"
    "        'TensorCoreIntrinEmitter: ' + what + ' must be a 2-D shared buffer (regions are not supported yet)'\n"
    "\n"
    "\n"
    "def TensorCoreIntrinEmitter(a_dtype='float16', b_dtype='float16', accum_dtype='float16',\n"
    "                            a_transposed=False, b_transposed=False, block_row_warps=2,\n"
    "                            block_col_warps=2, warp_row_tiles=8, warp_col_tiles=8, chunk=16,\n"
    "                            reduce_k=1, num_elems_per_byte=1, is_m_first=False, thread_var=None):\n"
    "    assert DataType(a_dtype).bits == 16 and DataType(b_dtype).bits == 16, \\\n"
    "        'TensorCoreIntrinEmitter: only 16-bit operands (float16, bfloat16: mma.sync m16n8k16) are supported yet'\n"
    "    assert num_elems_per_byte == 1, 'TensorCoreIntrinEmitter: num_elems_per_byte must be 1'\n"
    "    assert chunk >= 16, 'TensorCoreIntrinEmitter: chunk must be at least 16 (m16n8k16)'\n"
    "    assert warp_row_tiles >= 16 and warp_row_tiles % 16 == 0, \\\n"
    "        'TensorCoreIntrinEmitter: warp_row_tiles must be a multiple of 16'\n"
    "    assert warp_col_tiles >= 8 and warp_col_tiles % 8 == 0, \\\n"
    "        'TensorCoreIntrinEmitter: warp_col_tiles must be a multiple of 8'\n"
    "    k_dim = 16\n"
    "    n_dim = 16 if warp_col_tiles % 16 == 0 else 8\n"
    "    warp_rows = warp_row_tiles // 16\n"
    "    warp_cols = warp_col_tiles // n_dim\n"
    "    local_size_a = 16 * k_dim // 32\n"
    "    local_size_b = n_dim * k_dim // 32\n"
    "    local_size_out = 16 * n_dim // 32\n"
    "\n"
    "    def thread_parts():\n"
    "        tx = T.get_thread_binding() if thread_var is None else thread_var\n"
    "        if is_m_first:\n"
    "            return tx % 32, tx // 32 % block_col_warps, tx // (32 * block_col_warps) % block_row_warps\n"
    "        return tx % 32, tx // (32 * block_row_warps) % block_col_warps, tx // 32 % block_row_warps\n"
    "\n"
    "    @T.macro\n"
    "    def _ld_a(A_local_buf, A_shared_buf, ki, rk):\n"
    "        lane, warp_n, warp_m = thread_parts()\n"
    "        for i in T.unroll(warp_rows):\n"
    "            for j in T.unroll(local_size_a):\n"
    "                m, k = _frag_mk(lane, j)\n"
    "                if a_transposed:\n"
    "                    A_local_buf[i * local_size_a + j] = A_shared_buf[\n"
    "                        rk * chunk + ki * k_dim + k, warp_m * warp_row_tiles + i * 16 + m]\n"
    "                else:\n"
    "                    A_local_buf[i * local_size_a + j] = A_shared_buf[\n"
    "                        warp_m * warp_row_tiles + i * 16 + m, rk * chunk + ki * k_dim + k]\n"
    "\n"
    "    @T.macro\n"
    "    def _ld_b(B_local_buf, B_shared_buf, ki, rk):\n"
    "        lane, warp_n, warp_m = thread_parts()\n"
    "        for i in T.unroll(warp_cols):\n"
    "            for j in T.unroll(local_size_b):\n"
    "                n, k = _frag_nk(lane, j)\n"
    "                if b_transposed:\n"
    "                    B_local_buf[i * local_size_b + j] = B_shared_buf[\n"
    "                        warp_n * warp_col_tiles + i * n_dim + n, rk * chunk + ki * k_dim + k]\n"
    "                else:\n"
    "                    B_local_buf[i * local_size_b + j] = B_shared_buf[\n"
    "                        rk * chunk + ki * k_dim + k, warp_n * warp_col_tiles + i * n_dim + n]\n"
    "\n"
    "    @T.macro\n"
    "    def _mma(A_local_buf, B_local_buf, C_local_buf):\n"
    "        for i in T.unroll(warp_rows):\n"
    "            for j in T.unroll(warp_cols):\n"
    "                T.ptx_mma(A_local_buf, i * local_size_a, B_local_buf, j * local_size_b, C_local_buf,\n"
    "                          (i * warp_cols + j) * local_size_out, 'm16n8k16')\n"
    "                if n_dim == 16:\n"
    "                    T.ptx_mma(A_local_buf, i * local_size_a, B_local_buf, j * local_size_b + 4,\n"
    "                              C_local_buf, (i * warp_cols + j) * local_size_out + 4, 'm16n8k16')\n"
    "\n"
    "    @T.macro\n"
    "    def _st(C_local_buf, C_buf, row0, col0, four_d):\n"
    "        lane, warp_n, warp_m = thread_parts()\n"
    "        for i in T.unroll(warp_rows):\n"
    "            for j in T.unroll(warp_cols):\n"
    "                for l in T.unroll(local_size_out):\n"
    "                    r, c = _frag_mk(lane, l)\n"
    "                    if four_d:\n"
    "                        C_buf[warp_m * warp_rows + i, warp_n * warp_cols + j, r, c] = \\\n"
    "                            C_local_buf[(i * warp_cols + j) * local_size_out + l]\n"
    "                    else:\n"
    "                        C_buf[row0 + (warp_m * warp_rows + i) * 16 + r,\n"
    "                              col0 + (warp_n * warp_cols + j) * n_dim + c] = \\\n"
    "                            C_local_buf[(i * warp_cols + j) * local_size_out + l]\n"
    "\n"
    "    def ldmatrix_a(A_local_buf, A_shared_buf, ki, rk=0):\n"
    "        _check_local(A_local_buf, 'the A fragment')\n"
    "        _check_shared(A_shared_buf, 'the A operand')\n"
    "        return _ld_a(A_local_buf, A_shared_buf, ki, rk)\n"
    "\n"
    "    def ldmatrix_b(B_local_buf, B_shared_buf, ki, rk=0):\n"
    "        _check_local(B_local_buf, 'the B fragment')\n"
    "        _check_shared(B_shared_buf, 'the B operand')\n"
    "        return _ld_b(B_local_buf, B_shared_buf, ki, rk)\n"
    "\n"
    "    def mma(A_local_buf, B_local_buf, C_local_buf, k_inner=0):\n"
    "        _check_local(A_local_buf, 'the A fragment')\n"
    "        _check_local(B_local_buf, 'the B fragment')\n"
    "        _check_local(C_local_buf, 'the accumulator')\n"
    "        return _mma(A_local_buf, B_local_buf, C_local_buf)\n"
    "\n"
    "    def stmatrix(C_local_buf, C_buf, pid_m=None, pid_n=None):\n"
    "        _check_local(C_local_buf, 'the accumulator')\n"
    "        if pid_m is not None and pid_n is not None:\n"
    "            assert __tl_scope__(C_buf) == 'global' and len(C_buf.shape) == 2, \\\n"
    "                'TensorCoreIntrinEmitter.stmatrix: with pid_m / pid_n, C must be a 2-D global tensor'\n"
    "            return _st(C_local_buf, C_buf, pid_m * block_row_warps * warp_rows * 16,\n"
    "                       pid_n * block_col_warps * warp_cols * n_dim, False)\n"
    "        assert __tl_scope__(C_buf) in ('shared', 'shared.dyn') and len(C_buf.shape) in (2, 4), \\\n"
    "            'TensorCoreIntrinEmitter.stmatrix: C must be a 2-D or 4-D shared buffer'\n"
    "        return _st(C_local_buf, C_buf, 0, 0, len(C_buf.shape) == 4)\n"
    "\n"
    "    return __tl_object__({\n"
    "        'a_dtype': a_dtype, 'b_dtype': b_dtype, 'accum_dtype': accum_dtype,\n"
    "        'a_transposed': a_transposed, 'b_transposed': b_transposed,\n"
    "        'block_row_warps': block_row_warps, 'block_col_warps': block_col_warps,\n"
    "        'warp_row_tiles': warp_row_tiles, 'warp_col_tiles': warp_col_tiles, 'chunk': chunk,\n"
    "        'reduce_k': reduce_k, 'is_m_first': is_m_first, 'M_DIM': 16, 'n_dim': n_dim, 'k_dim': k_dim,\n"
    "        'micro_size_x': 16, 'micro_size_y': n_dim, 'micro_size_k': k_dim,\n"
    "        'warp_rows': warp_rows, 'warp_cols': warp_cols, 'local_size_a': local_size_a,\n"
    "        'local_size_b': local_size_b, 'local_size_out': local_size_out, 'WARP_SIZE': 32,\n"
    "        'threads': 32 * block_row_warps * block_col_warps * reduce_k,\n"
    "        'ldmatrix_a': ldmatrix_a, 'ldmatrix_b': ldmatrix_b, 'mma': mma, 'stmatrix': stmatrix})\n";

/* The modules TileLang exports the prelude's names from (and this
 * package's tilelang.cuda.intrinsics, which the Python package writes). */
static const char *const prelude_modules[] = {
    "tilelang.cuda.intrinsics",
    "tilelang.cuda.intrinsics.macro.mma_macro_generator",
    "tilelang.cuda.intrinsics.layout",
    "tilelang.cuda.intrinsics.layout.mma_layout",
    "tilelang.intrinsics",
    "tilelang.intrinsics.mma_macro_generator",
    "tilelang.intrinsics.mma_layout",
};
static const char *const prelude_names[] = {"TensorCoreIntrinEmitter", "get_swizzle_layout"};

/* Parses and runs the prelude's module statements once: its scope. */
static scope *prelude_scope(elab *E) {
  if (E->prelude) return E->prelude;
  tl_ast_module mod;
  if (!tl_parse_python(&E->m->arena, &E->m->names, E->d, prelude_src, sizeof prelude_src - 1, PRELUDE_FILE, &mod)) {
    E->nerr++;
    return NULL;
  }
  scope *saved = E->sc;
  E->sc = NULL;
  scope *sc = push_scope(E, false);
  if (sc) {
    sc->captured = true; /* its functions close over it: kept to the end */
    for (int i = 0; i < mod.body.n; i++) {
      const tl_ast_stmt *s = mod.body.stmts[i];
      if (s->kind == TL_AST_IMPORT) do_import(E, s);
      else if (s->kind == TL_AST_DEF) bind(E, sc, s->u.def.name, mk_pyfunc(E, s, NULL), s->u.def.name_loc, BK_CONST);
    }
    if (!tl_vec_push(&E->kept, sc)) oom(E);
  }
  E->sc = saved;
  E->prelude = sc;
  return sc;
}

val *tl_el_prelude_value(elab *E, const char *path) {
  const char *dot = strrchr(path, '.');
  if (!dot) return NULL;
  size_t nmod = (size_t)(dot - path);
  bool known = false;
  for (size_t i = 0; i < sizeof prelude_modules / sizeof *prelude_modules && !known; i++)
    known = strlen(prelude_modules[i]) == nmod && !strncmp(prelude_modules[i], path, nmod);
  for (size_t i = 0; known && i < sizeof prelude_names / sizeof *prelude_names; i++) {
    if (strcmp(prelude_names[i], dot + 1)) continue;
    scope *sc = prelude_scope(E);
    binding *b = sc ? tl_map_get(&sc->map, intern(E, dot + 1), NULL) : NULL;
    return b ? b->v : NULL;
  }
  return NULL;
}

/* __tl_object__({name: value, ...}): an object whose attributes are the
 * dict's string keys.  __tl_scope__(x): the scope name of buffer x, None
 * for anything else.  The prelude's two builtins (no TileLang names). */
val *tl_el_prelude_call(elab *E, const tl_ast_expr *x, bool *handled) {
  const tl_ast_expr *f = x->u.call.func;
  *handled = f->kind == TL_AST_NAME && (!strcmp(f->u.name, "__tl_object__") || !strcmp(f->u.name, "__tl_scope__"));
  if (!*handled) return NULL;
  if (!check_kws(E, x, f->u.name, NULL) || !check_arity(E, x, f->u.name, 1, 1)) return NULL;
  val *a = eval(E, x->u.call.args[0]);
  if (!a) return NULL;
  if (!strcmp(f->u.name, "__tl_scope__"))
    return a->k == V_BUFFER ? mk_str(E, tl_scope_name(a->u.buf->scope)) : mk(E, V_NONE);
  if (a->k != V_DICT) {
    err_val(E, x->loc, a, "__tl_object__ expects a dict, got %s", describe(E, a));
    return NULL;
  }
  val *o = mk_dict(E, a->u.dict.n);
  if (!o) return NULL;
  for (int i = 0; i < a->u.dict.n; i++) {
    if (a->u.dict.keys[i]->k != V_STR) {
      err(E, x->loc, "__tl_object__: attribute names must be strings");
      return NULL;
    }
    o->u.dict.keys[i] = a->u.dict.keys[i];
    o->u.dict.vals[i] = a->u.dict.vals[i];
    o->u.dict.klocs[i] = a->u.dict.klocs[i];
    o->u.dict.vlocs[i] = a->u.dict.vlocs[i];
  }
  o->u.dict.n = a->u.dict.n;
  o->is_obj = true;
  return o;
}
