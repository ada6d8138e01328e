/* Case files: the [kernel] section of a kind = kernel case. */
#include <string.h>

#include "case/case_loader.h"
#include "sb_rng.h"

sb_status sb_case_load_kernel(case_loader *ld, sb_case *c)
{
    int at = sb_case_section_line(ld, "kernel");
    if (at == 0)
        return sb_case_fail(ld, sb_case_section_line(ld, "case"), "a [kernel] section for kind = kernel");
    const case_entry *e = sb_case_find(ld, "kernel", "op");
    if (e == NULL)
        return sb_case_fail(ld, at, "key op (an op of kernels.def) in [kernel]");
    sb_op_call *call = &c->call;
    memset(call, 0, sizeof *call);
    call->op = sb_op_from_name(e->value);
    if (call->op == SB_OP_COUNT)
        return sb_case_fail(ld, e->line, "op as an op of kernels/kernels.def, found \"%s\"", e->value);
    const char *op = e->value;
    const case_param *list = sb_case_op_params(call->op);
    sb_optimizer kind = sb_case_op_optimizer(call->op);
    char keys[160];
    sb_case_describe_keys(keys, sizeof keys, list, kind);

    call->conv.stride = 1;
    call->t = 1;
    call->dropout.seed = c->seed;
    call->dropout.stream = SB_STREAM_DROPOUT;
    call->norm.eps = 1e-5f;
    call->rope.base = 10000.0f;
    call->nll.d = 1;
    call->nll.ignore_index = -100;
    call->window.sh = call->window.sw = 1;
    if (kind != SB_OPTIM_COUNT)
        sb_optim_defaults(&call->optim, kind);

    for (int i = 0; i < ld->n_entries; i++) {
        e = &ld->entries[i];
        if (strcmp(e->section, "kernel") != 0 || strcmp(e->key, "op") == 0)
            continue;
        const case_param *p = sb_case_find_param(list, e->key);
        void *base = call;
        if (p == NULL && kind != SB_OPTIM_COUNT) {
            p = sb_case_find_optim_param(kind, e->key);
            base = &call->optim;
        }
        if (p == NULL)
            return sb_case_fail(ld, e->line, "a parameter of %s (%s), found \"%s\"", op, keys, e->key);
        sb_status st = sb_case_set_param(ld, base, p, e);
        if (st != SB_OK)
            return st;
    }
    for (const case_param *p = list; p->key; p++)
        if (p->required && sb_case_find(ld, "kernel", p->key) == NULL)
            return sb_case_fail(ld, at, "key %s in [kernel] (%s takes %s)", p->key, op, keys);

    if (sb_op_call_describe(call) != SB_OK)
        return sb_case_fail(ld, at, "a shape %s can run: these [kernel] parameters are absurd "
                            "(a size not positive, a window larger than the padded input, kv_heads "
                            "not dividing h, or "
                            "more than 2^28 elements in a tensor or a scratch buffer)", op);
    return SB_OK;
}
