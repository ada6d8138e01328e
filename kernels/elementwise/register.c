/* The elementwise entries of the det and loose tables. These ops have no
 * reduction, so the usual parallel loop already gives the same bits for any
 * thread count: both families install it. */
#include "elementwise.h"

void sb_elementwise_register(sb_kernel_table *t, sb_family f)
{
    switch (f) {
    case SB_FAMILY_DET:
    case SB_FAMILY_LOOSE:
        t->relu_fwd = sb_relu_fwd_par;
        t->relu_bwd = sb_relu_bwd_par;
        t->maxpool_fwd = sb_maxpool_fwd_par;
        t->maxpool_bwd = sb_maxpool_bwd_par;
        t->dropout_mask = sb_dropout_mask_par;
        t->dropout_fwd = sb_dropout_fwd_par;
        t->dropout_bwd = sb_dropout_bwd_par;
        return;
    case SB_FAMILY_REF:
    case SB_FAMILY_COUNT:
        return;
    }
}
