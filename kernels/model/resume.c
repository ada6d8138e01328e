/* The start and the save of a checkpointed run, shared by the models'
 * loops. */
#include "resume.h"

sb_status sb_train_start(const sb_train_model *tm, const sb_model_run *r,
                         const sb_model_probe *p, char *err, size_t errlen)
{
    if (!sb_train_resuming(r->checkpoint)) {
        tm->init(tm->m, p);
        return SB_OK;
    }
    sb_train_state s;
    tm->state(tm->m, &s);
    sb_status st = r->checkpoint->load(r->checkpoint->ctx, &s, err, errlen);
    if (st != SB_OK)
        return st;
    if (r->cfg->resume_fault)
        r->cfg->resume_fault(&s.ctr);
    *tm->ctr = s.ctr;
    tm->resumed(tm->m);
    return SB_OK;
}

sb_status sb_train_save(const sb_train_model *tm, const sb_train_checkpoint *ck, char *err,
                        size_t errlen)
{
    sb_train_state s;
    tm->state(tm->m, &s);
    return ck->save(ck->ctx, &s, err, errlen);
}
