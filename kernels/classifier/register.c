/* The classifier entries of the det and loose tables. */
#include "classifier.h"

void sb_classifier_register(sb_kernel_table *t, sb_family f)
{
    switch (f) {
    case SB_FAMILY_DET:
        t->softmax_fwd = sb_softmax_fwd_par;
        t->xent_loss = sb_xent_loss_det;
        t->softmax_xent_bwd = sb_softmax_xent_bwd_par;
        t->accuracy = sb_accuracy_det;
        return;
    case SB_FAMILY_LOOSE:
        t->softmax_fwd = sb_softmax_fwd_par;
        t->xent_loss = sb_xent_loss_loose;
        t->softmax_xent_bwd = sb_softmax_xent_bwd_par;
        t->accuracy = sb_accuracy_loose;
        return;
    case SB_FAMILY_REF:
    case SB_FAMILY_COUNT:
        return;
    }
}
