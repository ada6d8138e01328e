/* FAULT: the per-group partials of the weight gradient live in a workspace
 * kept between calls (grown when too small, zeroed only when allocated), and
 * every image is added onto it, the first of each group included: the
 * partials carry whatever the previous call left. Everything else, and the
 * bits of a first call on a fresh workspace, are det's: the mutant runs det's
 * grouped gradient (conv/conv.h) on the stale workspace. */
#include <stdlib.h>

#include "conv/conv.h"
#include "mutants.h"

static float *workspace;
static size_t workspace_floats;

static float *workspace_get(size_t floats)
{
    if (floats > workspace_floats) {
        free(workspace);
        workspace = calloc(floats, sizeof *workspace);
        SB_ASSERT(workspace != NULL);
        workspace_floats = floats;
    }
    return workspace;
}

void sb_mutant_conv_filter_stale_acc(float *dw,         /* [k][c][r][s] */
                                     const float *dy,   /* [n][k][p][q] */
                                     const float *x,    /* [n][c][h][w] */
                                     const sb_conv_shape *s)
{
    const size_t taps = (size_t)s->c * s->r * s->s, nw = (size_t)s->k * taps;
    const int groups = (s->n + SB_CONV_GROUP - 1) / SB_CONV_GROUP;
    float *part = workspace_get(nw * (size_t)groups);
    /* onto: the first image of a group too is added to what its partial holds */
    sb_conv2d_bwd_filter_groups(dw, part, dy, x, s, true);
}
