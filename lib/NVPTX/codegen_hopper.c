/* The room for Hopper's instructions in the code generator (see
 * codegen_internal.h), empty for now: wgmma (wgmma.mma_async, fences,
 * commit/wait groups), TMA (cp.async.bulk.tensor and tensor-map
 * prefetches), mbarrier (init, arrive, arrive.expect_tx, try_wait.parity,
 * complete_tx), 1-D bulk copies (cp.async.bulk), named barriers
 * (bar.sync id, n) and proxy fences (fence.proxy.async), each as a cg_gen_*
 * hook that gen_call / gen_eval in codegen.c dispatch by tl_intrin, with
 * its LLVM intrinsic names in nv_names (codegen.c) and its capability check
 * against the target (PTX ISA §9.7.9.25, §9.7.13.15, §9.7.15). */
#include "NVPTX/codegen_internal.h"

