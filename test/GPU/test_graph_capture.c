/* GPU test (issue 30): CUDA-graph capture of a prim_func with several T.Kernel scopes.
 * test/Interp/ops/multi_kernel.py's partial_then_combine (kernel 1: 8 blocks write the sums of
 * their 64 elements of A into Partial; kernel 2: one block writes Out = [sum, max] of Partial) is
 * called once with tl_kernel_call on a stream under cuStreamBeginCapture (out_idx none: no allocation
 * during capture).  The captured graph must hold one kernel node per launch (cuGraphGetNodes: 2, of type
 * CU_GRAPH_NODE_TYPE_KERNEL), and three replays, each after new int32 inputs are copied in, must give
 * Partial and Out exactly as computed on the host.  Driver entry points: CUDA Driver API reference,
 * "Graph Management" and "Stream Management" (cuStreamBeginCapture_v2 mode 0 = global). */
#include "gpu_util.h"

#define CU_GRAPH_NODE_TYPE_KERNEL 0

typedef struct graph_api {
  CUres (*cuStreamBeginCapture)(void *, int);
  CUres (*cuStreamEndCapture)(void *, void **);
  CUres (*cuGraphGetNodes)(void *, void **, size_t *);
  CUres (*cuGraphNodeGetType)(void *, int *);
  CUres (*cuGraphInstantiate)(void **, void *, unsigned long long);
  CUres (*cuGraphLaunch)(void *, void *);
  CUres (*cuGraphExecDestroy)(void *);
  CUres (*cuGraphDestroy)(void *);
} graph_api;

int main(void) {
  tl_context *ctx;
  if (tl_context_create(&ctx) != TL_OK) return 1;
  gpu_init(ctx);
  graph_api g;
#define S(f, n) *(void **)(&g.f) = gpu_sym(g_driver, n)
  S(cuStreamBeginCapture, "cuStreamBeginCapture_v2");
  S(cuStreamEndCapture, "cuStreamEndCapture");
  S(cuGraphGetNodes, "cuGraphGetNodes");
  S(cuGraphNodeGetType, "cuGraphNodeGetType");
  S(cuGraphInstantiate, "cuGraphInstantiateWithFlags");
  S(cuGraphLaunch, "cuGraphLaunch");
  S(cuGraphExecDestroy, "cuGraphExecDestroy");
  S(cuGraphDestroy, "cuGraphDestroy");
#undef S
  char path[1024];
  snprintf(path, sizeof path, "%s/multi_kernel.py", ops_dir());
  tl_compile_options o = {0};
  o.out_idx_mode = TL_OUT_IDX_NONE;
  o.kernel = "partial_then_combine";
  tl_kernel *k = NULL;
  if (tl_kernel_compile_file(ctx, path, NULL, 0, &o, &k) != TL_OK || tl_kernel_load(ctx, k, 0) != TL_OK) {
    fprintf(stderr, "FAIL compile/load %s: %s\n", path, tl_context_last_error(ctx));
    return 1;
  }
  enum { N = 512, BLOCK = 64, NB = N / BLOCK };
  const int64_t shapes[3] = {N, NB, 2};
  dev_tensor t[3];
  for (int i = 0; i < 3; i++) { /* int32 tensors: dev_alloc's float32 has the same size, then the dtype */
    dev_alloc(&t[i], DT_F32, 1, &shapes[i]);
    t[i].t.dtype.code = kDLInt;
    CU(G.cuMemsetD8(t[i].ptr, 0xFF, t[i].bytes));
  }
  void *stream;
  CU(G.cuStreamCreate(&stream, 1 /* CU_STREAM_NON_BLOCKING */));
  tl_arg args[3] = {tl_arg_tensor(&t[0].t), tl_arg_tensor(&t[1].t), tl_arg_tensor(&t[2].t)};
  void *graph = NULL, *exec = NULL;
  CU(g.cuStreamBeginCapture(stream, 0));
  tl_status st = tl_kernel_call(ctx, k, args, 3, stream, NULL);
  CU(g.cuStreamEndCapture(stream, &graph));
  CHECK(st == TL_OK, "tl_kernel_call under capture: %s", tl_context_last_error(ctx));
  size_t nodes = 0;
  CU(g.cuGraphGetNodes(graph, NULL, &nodes));
  CHECK(nodes == 2, "the captured graph has %zu nodes, expected 2 (one per T.Kernel scope)", nodes);
  void *list[8];
  size_t nl = 8;
  CU(g.cuGraphGetNodes(graph, list, &nl));
  for (size_t i = 0; i < nl && i < 8; i++) {
    int type = -1;
    CU(g.cuGraphNodeGetType(list[i], &type));
    CHECK(type == CU_GRAPH_NODE_TYPE_KERNEL, "node %zu has type %d, expected a kernel node (0)", i, type);
  }
  CU(g.cuGraphInstantiate(&exec, graph, 0));
  rng_seed(12345);
  for (int rep = 0; rep < 3; rep++) {
    int32_t a[N], part[NB], out[2], want[NB];
    for (int i = 0; i < N; i++) a[i] = (int32_t)(rng_uniform() * 1000);
    CU(G.cuMemcpyHtoD(t[0].ptr, a, sizeof a));
    CU(G.cuMemsetD8(t[1].ptr, 0xFF, t[1].bytes));
    CU(G.cuMemsetD8(t[2].ptr, 0xFF, t[2].bytes));
    CU(g.cuGraphLaunch(exec, stream));
    CU(G.cuStreamSynchronize(stream));
    CU(G.cuMemcpyDtoH(part, t[1].ptr, sizeof part));
    CU(G.cuMemcpyDtoH(out, t[2].ptr, sizeof out));
    int32_t sum = 0, mx = INT32_MIN;
    for (int b = 0; b < NB; b++) {
      want[b] = 0;
      for (int i = 0; i < BLOCK; i++) want[b] += a[b * BLOCK + i];
      sum += want[b];
      mx = want[b] > mx ? want[b] : mx;
      CHECK(part[b] == want[b], "replay %d: Partial[%d] = %d, expected %d", rep, b, part[b], want[b]);
    }
    CHECK(out[0] == sum && out[1] == mx, "replay %d: Out = [%d, %d], expected [%d, %d]", rep, out[0], out[1], sum, mx);
    printf("ok   replay %d: Out = [%d, %d] (host: [%d, %d])\n", rep, out[0], out[1], sum, mx);
  }
  printf("captured graph: %zu kernel nodes\n", nodes);
  CU(g.cuGraphExecDestroy(exec));
  CU(g.cuGraphDestroy(graph));
  CU(G.cuStreamDestroy(stream));
  for (int i = 0; i < 3; i++) dev_free(&t[i]);
  tl_kernel_destroy(k);
  tl_context_destroy(ctx);
  return finish("test_graph_capture");
}
