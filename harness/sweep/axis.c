/* The names of the axes a report's axis field says (threads, batch,
 * ranks, resume); the configuration's whole name is sweep/config.c's. */
#include <string.h>

#include "sb_harness.h"

static const char *const axis_names[SB_AXIS_COUNT] = {
    [SB_AXIS_THREADS] = "threads",
    [SB_AXIS_BATCH] = "batch",
    [SB_AXIS_RANKS] = "ranks",
    [SB_AXIS_RESUME] = "resume",
};

const char *sb_axis_name(sb_axis a)
{
    return (unsigned)a < SB_AXIS_COUNT ? axis_names[a] : "?";
}

sb_axis sb_axis_from_name(const char *name)
{
    return (sb_axis)sb_name_index(axis_names, SB_AXIS_COUNT, name);
}
