/* The restore of a checkpoint's state, shared by the models' loops. */
#include "resume.h"

sb_status sb_train_restore(const sb_train_checkpoint *ck, const sb_train_config *cfg,
                           sb_train_state *s, char *err, size_t errlen)
{
    sb_status st = ck->load(ck->ctx, s, err, errlen);
    if (st == SB_OK && cfg->resume_fault)
        cfg->resume_fault(&s->ctr);
    return st;
}
