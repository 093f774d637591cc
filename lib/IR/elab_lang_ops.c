/* Elaborator, TileLang's language ops of issue 14 that are not tile ops of
 * their own: the names (tl_el_lang_op_names) and their calls. */
#include "IR/elab_impl.h"

const char *const tl_el_lang_op_names[] = {"align_up", NULL};
