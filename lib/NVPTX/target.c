/* NVPTX target table: the facts codegen and the runtime need about each
 * supported GPU architecture, in one place.
 *
 * Algorithm: a constant table searched by name.
 * Sources:
 *  - PTX ISA 8.5, "Release notes" / "PTX ISA version" tables: sm_80 needs
 *    PTX 7.0, sm_86 PTX 7.1, sm_89 PTX 7.8, sm_90 PTX 7.8, sm_90a PTX 8.0;
 *    the Hopper instructions (wgmma, cp.async.bulk, mbarrier tx-count,
 *    setmaxnreg, elect) need PTX 8.0, so sm_90 is built with +ptx80 too
 *    (../shared/NVPTX.md §2).
 *  - CUDA C++ Programming Guide, "Technical Specifications per Compute
 *    Capability": maximum shared memory per block (opt-in) 163 KB on 8.0,
 *    99 KB on 8.6 and 8.9, 227 KB on 9.0; per SM 164 KB / 100 KB / 100 KB /
 *    228 KB; 1024 threads per block; 255 registers per thread.
 *  - PTX ISA §9.7.3 (half arithmetic): add/sub/mul/fma .f16 from sm_53;
 *    .bf16 add/sub/mul from sm_90 (sm_80 has only fma.rn.bf16 and cvt).
 */
#include "NVPTX/nvptx.h"

#include <string.h>

static const tl_target targets[] = {
    /* name     sm  arch   features   smem/block  threads ptx smem/SM  bf16 */
    {"sm_80", 80, false, "+ptx70", 166912, 1024, 70, 167936, false},
    {"sm_86", 86, false, "+ptx71", 101376, 1024, 71, 102400, false},
    {"sm_89", 89, false, "+ptx78", 101376, 1024, 78, 102400, false},
    {"sm_90", 90, false, "+ptx80", 232448, 1024, 80, 233472, true},
    {"sm_90a", 90, true, "+ptx80", 232448, 1024, 80, 233472, true},
};

const tl_target *tl_target_lookup(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
    if (strcmp(targets[i].name, name) == 0) return &targets[i];
  }
  return NULL;
}

const char *tl_target_names(void) { return "sm_80, sm_86, sm_89, sm_90 or sm_90a"; }
