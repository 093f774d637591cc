/* The Hopper-path decision (lib/Support/Hopper/path.h): the target's wgmma
 * and TMA (lib/Support/target.c) and the three pass configs that turn the
 * path off (include/tilelang/pass_configs.def). */
#include "Support/Hopper/path.h"

#include <stddef.h>

const char *tl_hopper_path_refusal(const tl_target *t, const tl_pass_configs *pc) {
  if (!t) return "no target";
  if (!t->wgmma || !t->tma) return t->tma ? "the target has no wgmma (sm_90a has)" : "the target has no wgmma/TMA";
  if (pc->disable_wgmma) return "tl.disable_wgmma is set";
  if (pc->disable_tma_lower) return "tl.disable_tma_lower is set";
  if (pc->disable_warp_specialized) return "tl.disable_warp_specialized is set";
  return NULL;
}
