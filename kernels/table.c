/* The kernel table of each family: ref first, then the family's overrides. */
#include <pthread.h>
#include <string.h>

#include "sb_kernels.h"

static const char *const op_names[SB_OP_COUNT] = {
#define SB_OP(name, params) #name,
#include "kernels.def"
#undef SB_OP
};

static const sb_kernel_table ref_table = {
#define SB_OP(name, params) .name = sb_##name##_ref,
#include "kernels.def"
#undef SB_OP
};

const char *sb_op_name(sb_op op)
{
    return (unsigned)op < SB_OP_COUNT ? op_names[op] : "?";
}

sb_op sb_op_from_name(const char *name)
{
    for (int i = 0; i < SB_OP_COUNT; i++)
        if (strcmp(op_names[i], name) == 0)
            return (sb_op)i;
    return SB_OP_COUNT;
}

static const char *const family_names[SB_FAMILY_COUNT] = {"ref", "det", "loose"};

const char *sb_family_name(sb_family f)
{
    return (unsigned)f < SB_FAMILY_COUNT ? family_names[f] : "?";
}

sb_family sb_family_from_name(const char *name)
{
    for (int i = 0; i < SB_FAMILY_COUNT; i++)
        if (strcmp(family_names[i], name) == 0)
            return (sb_family)i;
    return SB_FAMILY_COUNT;
}

static sb_kernel_table tables[SB_FAMILY_COUNT];

static void build_tables(void)
{
    for (int f = 0; f < SB_FAMILY_COUNT; f++) {
        sb_kernel_table *t = &tables[f];
        *t = ref_table;
        if (f == SB_FAMILY_REF)
            continue;
        sb_conv_register(t, (sb_family)f);
        sb_dense_register(t, (sb_family)f);
        sb_elementwise_register(t, (sb_family)f);
        sb_classifier_register(t, (sb_family)f);
        sb_optim_register(t, (sb_family)f);
    }
}

const sb_kernel_table *sb_kernels(sb_family f)
{
    SB_ASSERT((unsigned)f < SB_FAMILY_COUNT);
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, build_tables);
    return &tables[f];
}
