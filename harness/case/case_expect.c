/* Case files: the [expect] section of a mutant case. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "case/case_loader.h"

/* [expect] of a mutant case: what `samebits mutants` must find. detected =
 * yes or no (default yes), op = the op the first divergence must be in
 * (default the mutant's op), probe and step = the probe and the step it
 * must be (default any). */
sb_status sb_case_load_expect(case_loader *ld, sb_case *c)
{
    int at = sb_case_section_line(ld, "expect");
    c->expect_detected = c->mutant[0] != '\0';
    /* a rank mutant's divergence is at a combined gradient, which no op of
     * the kernel list makes: SB_OP_COUNT, its op SB_ALLREDUCE_OP */
    int kernel_mutant = c->mutant[0] ? sb_mutant_find(c->mutant) : -1;
    c->expect_op = kernel_mutant >= 0 ? sb_mutant_op(kernel_mutant) : SB_OP_COUNT;
    c->expect_probe[0] = '\0';
    c->expect_step = -1;
    if (at == 0 && c->mutant[0] && sb_resume_mutant_find(c->mutant) >= 0)
        return sb_case_fail(ld, sb_case_find(ld, "case", "mutant")->line,
                            "an [expect] section (step, probe) in a case of resume "
                            "mutant %s", c->mutant);
    if (at == 0)
        return SB_OK;
    if (c->mutant[0] == '\0')
        return sb_case_fail(ld, at, "[expect] only in a mutant case (a [case] mutant = NAME key)");
    static const char *const expect_keys[] = {"detected", "op", "probe", "step", NULL};
    for (int i = 0; i < ld->n_entries; i++) {
        const case_entry *e = &ld->entries[i];
        if (strcmp(e->section, "expect") == 0 && !sb_case_in_list(expect_keys, e->key))
            return sb_case_fail(ld, e->line,
                                "a key of [expect] (detected, op, probe, step), found \"%s\"", e->key);
    }
    const case_entry *e = sb_case_find(ld, "expect", "detected");
    if (e != NULL) {
        if (strcmp(e->value, "yes") != 0 && strcmp(e->value, "no") != 0)
            return sb_case_fail(ld, e->line, "detected as yes or no, found \"%s\"", e->value);
        c->expect_detected = strcmp(e->value, "yes") == 0;
    }
    if ((e = sb_case_find(ld, "expect", "op")) != NULL) {
        c->expect_op = sb_op_from_name(e->value);
        if (c->expect_op == SB_OP_COUNT)
            return sb_case_fail(ld, e->line, "op as an op of kernels/kernels.def, found \"%s\"", e->value);
    }
    if ((e = sb_case_find(ld, "expect", "probe")) != NULL &&
        snprintf(c->expect_probe, sizeof c->expect_probe, "%s", e->value) >=
            (int)sizeof c->expect_probe)
        return sb_case_fail(ld, e->line, "probe as a name of at most %zu characters",
                            sizeof c->expect_probe - 1);
    if ((e = sb_case_find(ld, "expect", "step")) != NULL &&
        sb_case_get_i64(ld, e, 0, INT64_MAX, &c->expect_step) != SB_OK)
        return SB_ERR_INPUT;
    /* a restore's fault is in no op of its own: where it shows is the point */
    if (sb_resume_mutant_find(c->mutant) >= 0 && (c->expect_step < 0 || !c->expect_probe[0]))
        return sb_case_fail(ld, at, "[expect] step and probe in a case of resume mutant %s (the "
                            "first step after the resume, and its first divergent probe)",
                            c->mutant);
    return SB_OK;
}
