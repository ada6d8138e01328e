/* Time: the monotonic clock, and durations as people read them, to a
 * precision that fits their size. */
#include <math.h>
#include <time.h>

#include "support.h"

double sb_monotonic_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void sb_duration_human(char *out, size_t len, double seconds)
{
    if (!(seconds >= 0))        /* NaN, or a clock that went back */
        seconds = 0;
    if (seconds < 1)
        snprintf(out, len, "%.0f ms", seconds * 1000);
    else if (seconds < 60)
        snprintf(out, len, "%.3g s", seconds);
    else if (seconds < 3600)
        snprintf(out, len, "%d min %02d s", (int)(seconds / 60), (int)fmod(seconds, 60));
    else
        snprintf(out, len, "%d h %02d min", (int)(seconds / 3600), (int)fmod(seconds, 3600) / 60);
}

void sb_seconds_cell(char *out, size_t len, double seconds)
{
    /* a millisecond run is not "0.00" */
    snprintf(out, len, seconds < 0.1 ? "%.3f" : "%.2f", seconds);
}
