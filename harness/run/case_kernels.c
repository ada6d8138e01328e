/* What a case runs with: its kernel table and its model's training run. */
#include "sb_harness.h"

const sb_kernel_table *sb_case_kernels(const sb_case *c)
{
    /* a rank mutant's fault is in the data-parallel step (train.rank_fault),
     * a resume mutant's in the restore of a checkpoint (train.resume_fault) */
    if (c->mutant[0] == '\0' || sb_rank_mutant_find(c->mutant) >= 0 ||
        sb_resume_mutant_find(c->mutant) >= 0)
        return sb_kernels(c->family);
    const sb_kernel_table *k = sb_kernels_mutant(c->mutant);
    SB_ASSERT(k != NULL);   /* the case loader checked the name */
    return k;
}

sb_model_run sb_case_model_run(const sb_case *c, const sb_kernel_table *k,
                               const sb_train_config *cfg, const char *data_dir)
{
    return (sb_model_run){
        .k = k, .cfg = cfg, .dataset = c->dataset, .data_dir = data_dir,
        .train_begin = c->train_begin, .train_end = c->train_end,
        .test_begin = c->test_begin, .test_end = c->test_end, .what = c->path,
    };
}
