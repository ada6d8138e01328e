/* The kernel table of each family, the op names and areas, all generated
 * from kernels.def: ref first, then each op's det kernel, and for loose the
 * op's own loose kernel where it has one. */
#include "op_kernels.h"

static const char *const op_names[SB_OP_COUNT] = {
#define SB_OP(name, ...) #name,
#include "kernels.def"
#undef SB_OP
};

static const char *const op_areas[SB_OP_COUNT] = {
#define SB_OP(name, area, ...) #area,
#include "kernels.def"
#undef SB_OP
};

static const sb_kernel_table tables[SB_FAMILY_COUNT] = {
    [SB_FAMILY_REF] = {
#define SB_OP(name, ...) .name = sb_##name##_ref,
#include "kernels.def"
#undef SB_OP
    },
    [SB_FAMILY_DET] = {
#define SB_OP(name, ...) .name = sb_##name##_det,
#include "kernels.def"
#undef SB_OP
    },
    [SB_FAMILY_LOOSE] = {
#define SB_OP(name, area, params, outputs, inputs, bound, loose, ...) \
    .name = SB_CHOOSE_##loose(sb_##name##_loose, sb_##name##_det),
#include "kernels.def"
#undef SB_OP
    },
};

const char *sb_op_name(sb_op op)
{
    return (unsigned)op < SB_OP_COUNT ? op_names[op] : "?";
}

const char *sb_op_area(sb_op op)
{
    return (unsigned)op < SB_OP_COUNT ? op_areas[op] : "?";
}

sb_op sb_op_from_name(const char *name)
{
    return (sb_op)sb_name_index(op_names, SB_OP_COUNT, name);
}

static const char *const family_names[SB_FAMILY_COUNT] = {"ref", "det", "loose"};

const char *sb_family_name(sb_family f)
{
    return (unsigned)f < SB_FAMILY_COUNT ? family_names[f] : "?";
}

sb_family sb_family_from_name(const char *name)
{
    return (sb_family)sb_name_index(family_names, SB_FAMILY_COUNT, name);
}

const sb_kernel_table *sb_kernels(sb_family f)
{
    SB_ASSERT((unsigned)f < SB_FAMILY_COUNT);
    return &tables[f];
}
