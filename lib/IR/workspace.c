/* Kernel workspaces (lib/IR/tir.h tl_workspace_collect): the global
 * buffers a kernel allocates itself (only lowering makes them: stream-K's
 * slots and counters, lib/Lower/Hopper/stream_k.c), which code generation passes
 * as hidden pointer parameters after the tensor maps and the runtimes
 * allocate zeroed (docs/simt-ir.md "Stream-K"). */
#include "IR/tir.h"

int tl_workspace_collect(const tl_primfunc *f, tl_buffer **bufs, int max) {
  const tl_stmt *k = f ? tl_ir_find_kernel(f->body) : NULL;
  const tl_stmt *body = k ? k->u.kernel.body : NULL;
  int n = 0;
  for (int i = 0; body && body->kind == TL_STMT_SEQ && i < body->u.seq.n; i++) {
    const tl_stmt *s = body->u.seq.stmts[i];
    if (!s || s->kind != TL_STMT_ALLOC || !s->u.alloc.buffer || s->u.alloc.buffer->scope != TL_SCOPE_GLOBAL ||
        tl_buffer_is_view(s->u.alloc.buffer)) /* T.make_tensor: memory of the caller's */
      continue;
    if (n < max && bufs) bufs[n] = s->u.alloc.buffer;
    if (n < max) n++;
  }
  return n;
}

int64_t tl_workspace_bytes(const tl_buffer *b) {
  int64_t n = tl_dtype_bytes(b->dtype) * (b->dtype.lanes > 1 ? b->dtype.lanes : 1);
  for (int d = 0; d < b->ndim; d++) {
    int64_t v;
    if (!b->shape || !b->shape[d] || !tl_expr_is_const_int(b->shape[d], &v) || v < 0) return 0;
    n *= v;
  }
  return n;
}
