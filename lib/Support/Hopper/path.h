/* The Hopper-path decision (internal): whether a target and a function's
 * pass configs allow the sm_90a path of TMA + mbarriers + wgmma with a
 * producer warpgroup.  One predicate that the warp-specialize pass
 * (lib/Lower/Hopper/warp_specialize.c, which then matches the loop) and the
 * GEMM tile-configuration tables (lib/Runtime/configs.c,
 * tl_gemm_configs_use_hopper) both ask. */
#ifndef TL_SUPPORT_HOPPER_PATH_H
#define TL_SUPPORT_HOPPER_PATH_H

#include "Support/target.h"

/* NULL when target t has wgmma and TMA and none of "tl.disable_wgmma",
 * "tl.disable_tma_lower", "tl.disable_warp_specialized" is set in *pc;
 * otherwise why not, for remarks ("the target has no wgmma/TMA",
 * "tl.disable_wgmma is set", ...; static).  NULL t: "no target". */
const char *tl_hopper_path_refusal(const tl_target *t, const tl_pass_configs *pc);

#endif
