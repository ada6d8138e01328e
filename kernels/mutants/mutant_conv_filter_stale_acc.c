/* FAULT: the per-group partials of the weight gradient live in a workspace
 * kept between calls (grown when too small, zeroed only when allocated), and
 * every image is added onto it, the first of each group included: the
 * partials carry whatever the previous call left. Everything else, and the
 * bits of a first call on a fresh workspace, are det's. */
#include <stdlib.h>

#include "conv/conv_det.h"
#include "mutants.h"

/* Images per partial, as the det kernel. */
#define GROUP 4

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
    const size_t taps = (size_t)s->c * s->r * s->s, pq = (size_t)s->p * s->q;
    const size_t nw = (size_t)s->k * taps;
    const size_t image = (size_t)s->c * s->h * s->w, out = (size_t)s->k * pq;
    const int groups = (s->n + GROUP - 1) / GROUP;
    float *part = workspace_get(nw * (size_t)groups);
#pragma omp parallel
    {
        float *colt = malloc(taps * pq * sizeof *colt);
        sb_gemm_work *wk = sb_gemm_work_new(s->k, (int)taps, (int)pq);
        SB_ASSERT(colt != NULL && wk != NULL);
#pragma omp for schedule(dynamic)
        for (int g = 0; g < groups; g++) {
            int i0 = g * GROUP, i1 = i0 + GROUP < s->n ? i0 + GROUP : s->n;
            for (int img = i0; img < i1; img++)
                sb_conv2d_bwd_filter_image(part + nw * (size_t)g, colt, wk, dy + img * out,
                                           x + img * image, s, true);
        }
        sb_gemm_work_free(wk);
        free(colt);
#pragma omp for schedule(static)
        for (size_t i = 0; i < nw; i++) {
            float acc = part[i];
            for (int g = 1; g < groups; g++)
                acc += part[nw * (size_t)g + i];
            dw[i] = acc;
        }
    }
}
