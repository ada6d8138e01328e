/* FAULT: the per-group partials of the weight gradient live in a workspace
 * kept between calls (grown when too small, zeroed only when allocated), and
 * every image is added onto it, the first of each group included: the
 * partials carry whatever the previous call left. Everything else, and the
 * bits of a first call on a fresh workspace, are det's: its groups, its
 * per-group products and its sum of the partials (conv/conv.h). */
#include <stdlib.h>

#include "conv/conv.h"
#include "gemm/sb_gemm.h"
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
#pragma omp parallel
    {
        float *bbuf = sb_floats_new(sb_gemm_b_buf_floats((int)taps, s->p * s->q));
#pragma omp for schedule(dynamic)
        for (int g = 0; g < groups; g++) {
            int i0 = g * SB_CONV_GROUP;
            int i1 = i0 + SB_CONV_GROUP < s->n ? i0 + SB_CONV_GROUP : s->n;
            /* onto: the first image too is added to what the partial holds */
            sb_conv2d_bwd_filter_images(part + nw * (size_t)g, bbuf, dy, x, s, i0, i1, true);
        }
        free(bbuf);
        sb_conv_partials_sum(dw, part, nw, groups);
    }
}
