/* The axes a configuration can vary (threads, batch, ranks) and the name a
 * report gives one configuration. */
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

void sb_run_config_name(const sb_run_result *r, char *out, size_t len)
{
    switch (r->axis) {
    case SB_AXIS_THREADS:
        snprintf(out, len, "threads=%d", r->threads);
        return;
    case SB_AXIS_BATCH:
        snprintf(out, len, "batch=%d threads=%d", r->batch, r->threads);
        return;
    case SB_AXIS_RANKS:
        snprintf(out, len, "ranks=%d threads=%d", r->ranks, r->threads);
        return;
    case SB_AXIS_RESUME:
        snprintf(out, len, "resume=%d threads=%d", r->resume_at, r->threads);
        return;
    case SB_AXIS_COUNT:
        break;
    }
    snprintf(out, len, "threads=%d", r->threads);
}
